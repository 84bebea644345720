import opencode_nb.provider as provider


def test_the_package_exports_exactly_its_contract():
    assert set(provider.__all__) == {
        "FileBlock", "ImageBlock", "LLMMessage", "LLMRequest", "Provider", "ProviderRegistry", "ReasoningBlock",
        "ReasoningDelta", "ReasoningEnd", "RetryPolicy",
        "Scripted", "StepFinish", "TextBlock", "TextDelta", "ToolCall", "ToolCallBlock", "ToolCallStart",
        "ToolResultBlock", "ToolSpec", "Turn", "Usage", "cost", "model_info",
    }
    assert all(getattr(provider, name) is not None for name in provider.__all__)
