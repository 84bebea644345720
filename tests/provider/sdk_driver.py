"""Run one of our providers on an SDK installed in a folder of its own (tests/provider/test_sdk_versions.py).

    python sdk_driver.py FOLDER anthropic|openai BASE_URL [--unfitted]

The folder goes first on `sys.path`, so `import anthropic` is that version whatever the venv holds; then the
provider streams every request shape we build, with every parameter we can send, to the loopback server at
BASE_URL. It prints one JSON object: the SDK's version and file, each call's events (their types, the text and
the tool calls) or error, and the warnings raised. Only loopback is reached. `--unfitted` takes the fitting to
the SDK away (sdk_fit.py), for the control that shows the test sees a parameter the SDK does not take.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any


def main() -> None:
    folder, kind, base_url = sys.argv[1], sys.argv[2], sys.argv[3]
    sys.path.insert(0, folder)
    sdk = __import__(kind)
    import opencode_nb.provider as llm  # after the insert, so the provider imports that folder's SDK

    pixel = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
    history = [
        llm.LLMMessage(role="user", content=[llm.TextBlock(text="Chart the sales."),
                                             llm.ImageBlock(mime="image/png", data=pixel)]),
        llm.LLMMessage(role="assistant", content=[
            *([llm.ReasoningBlock(text="First read the data.", metadata={"signature": "sig-1"})] if kind == "anthropic"
              else []),
            llm.TextBlock(text="Reading it."),
            llm.ToolCallBlock(id="call_1", name="read", input={"path": "sales.csv"})]),
        llm.LLMMessage(role="tool",
                       content=[llm.ToolResultBlock(call_id="call_1", name="read", output="month,total\n1,5")]),
    ]
    tools = [llm.ToolSpec(name="read", description="Reads a file.",
                          parameters={"type": "object", "properties": {"path": {"type": "string"}},
                                      "required": ["path"]})]
    common: dict[str, Any] = {"system": ["You chart data.", "Project: sales."], "messages": history, "tools": tools}
    if "--unfitted" in sys.argv:
        import opencode_nb.provider.anthropic as with_anthropic
        import opencode_nb.provider.openai as with_openai

        for module in (with_anthropic, with_openai):
            module.fit_to_sdk = lambda body, accepted, sdk: body  # type: ignore[attr-defined]
    if kind == "anthropic":
        from opencode_nb.provider.anthropic import AnthropicProvider

        provider: Any = AnthropicProvider(api_key="sk-ant-test", base_url=base_url)
        model = llm.model_info("anthropic", "claude-sonnet-4-6")
        requests = [
            llm.LLMRequest(model=model, temperature=0.3, top_p=0.9, max_tokens=700, tool_choice="auto", **common,
                           options={"top_k": 40, "stop_sequences": ["END"], "metadata": {"user_id": "u-1"},
                                    "extra_body": {"probe": "sampling"}}),
            llm.LLMRequest(model=model, max_tokens=900, tool_choice="none", **common,
                           options={"thinking": {"budget_tokens": 2048}, "output_config": {"effort": "high"},
                                    "service_tier": "auto", "stop_sequences": ["END"],
                                    "extra_body": {"probe": "thinking"}}),
        ]
    else:
        from opencode_nb.provider.openai import OpenAIProvider

        provider = OpenAIProvider(api_key="sk-test", base_url=base_url)
        requests = [
            llm.LLMRequest(model=llm.model_info("openai", "gpt-4o"), temperature=0.3, top_p=0.9, max_tokens=700,
                           **common,
                           options={"seed": 7, "stop": ["END"], "user": "u-1", "frequency_penalty": 0.1,
                                    "presence_penalty": 0.1, "logit_bias": {"50256": -100},
                                    "parallel_tool_calls": False, "service_tier": "auto",
                                    "extra_body": {"probe": "sampling"}}),
            llm.LLMRequest(model=llm.model_info("openai", "gpt-5"), max_tokens=900, tool_choice="none", **common,
                           options={"reasoning_effort": "high", "verbosity": "low", "prompt_cache_key": "k-1",
                                    "extra_body": {"probe": "reasoning"}}),
        ]

    async def call(request: llm.LLMRequest) -> dict[str, Any]:
        try:
            events = [e async for e in provider.stream(request)]
        except Exception as exc:  # what a person would see: reported, not raised, so every call is tried
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {"events": [e.type for e in events],
                "text": "".join(getattr(e, "text", "") for e in events if e.type == "text"),
                "calls": [{"name": e.name, "input": e.input} for e in events if e.type == "tool-call"]}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async def every() -> list[dict[str, Any]]:
            return [await call(r) for r in requests]  # one loop: the SDK's client belongs to the loop it first ran on

        results = asyncio.run(every())
    print(json.dumps({"version": sdk.__version__, "file": str(Path(sdk.__file__).resolve()), "results": results,
                      "warnings": [str(w.message) for w in caught]}))


if __name__ == "__main__":
    main()
