from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from opencode_nb.errors import DeniedError, ToolError
from opencode_nb.tool.variables import VariablesTool, resolve


class Spy:
    """Records every attribute read and call made through it."""

    def __init__(self) -> None:
        self.touched: list[str] = []

    def __getattr__(self, name: str):
        self.touched.append(name)
        return lambda *args, **kwargs: self.touched.append(f"{name}()")


@pytest.fixture
def namespace():
    return {
        "sales": pd.DataFrame({"price": [1.0, 2.5, None], "region": ["north", "south", "north"]}),
        "config": {"train": [1, 2, 3], "model": {"depth": 4}},
        "items": ["a", "b", "c"],
        "point": SimpleNamespace(x=1.5, y=-2.0),
        "arr": np.arange(6).reshape(2, 3),
        "spy": Spy(),
        "_private": 1,
        "np": np,
    }


@pytest.fixture
def kernel_ctx(ctx, namespace):
    ctx.kernel = SimpleNamespace(language="python", notebook_path=None, user_ns=namespace)
    return ctx


def test_the_model_is_told_how_to_name_a_value_and_what_is_refused():
    spec = VariablesTool().spec()
    assert spec.name == "variables" and list(spec.parameters["properties"]) == ["name"]
    assert 'df["price"]' in spec.description and "Calls, slices and operators are not evaluated" in spec.description


async def test_without_a_kernel_the_tool_says_variables_exist_only_in_a_notebook(ctx):
    with pytest.raises(ToolError, match="no live kernel in this session.*only when the agent runs in a Jupyter"):
        await VariablesTool().run({}, ctx)


async def test_the_tool_asks_permission_variables_for_the_name_or_everything(kernel_ctx):
    await VariablesTool().run({}, kernel_ctx)
    await VariablesTool().run({"name": " sales.price "}, kernel_ctx)
    assert kernel_ctx.permissions() == [("variables", ["*"]), ("variables", ["sales.price"])]
    assert all(asked.always == ["*"] for asked in kernel_ctx.asked)


async def test_a_denied_ask_reads_nothing(project, namespace):
    from tests.tool.fakes import RecordingContext

    ctx = RecordingContext(project, deny=["variables"])
    ctx.kernel = SimpleNamespace(language="python", notebook_path=None, user_ns=namespace)
    with pytest.raises(DeniedError):
        await VariablesTool().run({"name": "spy.secret"}, ctx)
    assert namespace["spy"].touched == []


async def test_without_a_name_the_tool_lists_the_namespace(kernel_ctx):
    result = await VariablesTool().run({}, kernel_ctx)
    assert result.title == "6 variables"
    assert result.metadata == {"count": 6, "summary": "Listed 6 variables"}
    names = [line.split(" | ")[0].strip("| ") for line in result.output.splitlines() if line.startswith("| ")]
    assert names == ["name", "arr", "sales", "config", "items", "point", "spy"]


async def test_a_name_is_described_in_detail(kernel_ctx):
    result = await VariablesTool().run({"name": "sales"}, kernel_ctx)
    assert result.title == "sales"
    assert result.metadata == {"name": "sales", "type": "pandas.DataFrame",
                               "summary": "Described sales (pandas.DataFrame)"}
    assert result.output.startswith("sales: pandas DataFrame, 3 rows × 2 columns")
    assert "| price | float64 | 2 | 1 | min 1 · max 2.5 · mean 1.75 |" in result.output


@pytest.mark.parametrize("name", ["sales.price", 'sales["price"]', "sales['price']"])
async def test_a_column_is_reached_by_attribute_or_subscript(kernel_ctx, name):
    result = await VariablesTool().run({"name": name}, kernel_ctx)
    assert result.output.startswith(f"{name}: pandas Series 'price', 3 values")


@pytest.mark.parametrize(("name", "expected"), [
    ('config["train"]', [1, 2, 3]), ('config["model"]["depth"]', 4), ("items[1]", "b"), ("items[-1]", "c"),
    ("point.x", 1.5), ("arr.shape", (2, 3)),
])
def test_keys_indexes_and_attributes_resolve(namespace, name, expected):
    assert resolve(namespace, name) == expected


def test_an_unknown_name_suggests_close_matches_and_the_listing(namespace):
    with pytest.raises(ToolError) as error:
        resolve(namespace, "sale")
    assert str(error.value) == ("No variable named `sale` in the kernel. Close matches: sales. "
                                "Call variables without a name to list the variables.")
    with pytest.raises(ToolError, match="Close matches: sales"):
        resolve(namespace, "SALES")


def test_a_missing_column_key_or_attribute_lists_close_ones(namespace):
    with pytest.raises(ToolError, match=r"`sales` has no column 'prices'\. Close matches: price\."):
        resolve(namespace, 'sales["prices"]')
    with pytest.raises(ToolError, match=r"`config` has no key 'trian'\. Close matches: train\."):
        resolve(namespace, 'config["trian"]')
    with pytest.raises(ToolError, match=r"`config` has no key 'zzz'\. Its keys include: 'train', 'model'\."):
        resolve(namespace, 'config["zzz"]')
    with pytest.raises(ToolError, match=r"`point` \(types.SimpleNamespace\) has no attribute `z`"):
        resolve(namespace, "point.z")
    with pytest.raises(ToolError, match=r"`items\[7\]` is out of range: `items` has 3 items\."):
        resolve(namespace, "items[7]")


def test_looking_up_a_missing_key_does_not_grow_a_defaultdict():
    counts = defaultdict(int, seen=1)
    with pytest.raises(ToolError, match="has no key 'unseen'"):
        resolve({"counts": counts}, 'counts["unseen"]')
    assert dict(counts) == {"seen": 1}


@pytest.mark.parametrize(("name", "what"), [
    ('sales.drop(columns="price", inplace=True)', "a call"),
    ('sales.drop(columns="price", inplace=True).shape', "a call"),
    ("spy.wipe()", "a call"),
    ("spy.wipe().x", "a call"),
    ('spy[spy.wipe()]', "a call"),
    ("sales[sales.price > 1]", "a comparison"),
    ("items[0:2]", "a slice"),
    ("sales.price + 1", "an operator"),
    ("__import__('os').system('touch pwned')", "a call"),
    ("[spy.x for _ in 'a']", "an expression"),
    ("(spy := 1)", "an assignment"),
    ("42", "a literal"),
])
def test_expressions_are_refused_before_anything_is_read(namespace, project, name, what):
    with pytest.raises(ToolError, match=f"contains {what}, which the variables tool does not evaluate; nothing was"):
        resolve(namespace, name)
    assert namespace["spy"].touched == []
    assert list(namespace["sales"].columns) == ["price", "region"]
    assert not (project / "pwned").exists()


def test_text_that_is_not_python_is_refused_with_what_is_allowed(namespace):
    with pytest.raises(ToolError, match=r"is not a name the variables tool can look up\. Give a variable name"):
        resolve(namespace, "sales price")


def test_an_attribute_that_raises_becomes_a_tool_error():
    class Sensor:
        @property
        def reading(self) -> float:
            raise OSError("device unplugged")

    with pytest.raises(ToolError, match="Reading `sensor.reading` raised OSError: device unplugged"):
        resolve({"sensor": Sensor()}, "sensor.reading")


async def test_an_explicitly_named_hidden_value_can_still_be_described(kernel_ctx):
    assert (await VariablesTool().run({"name": "_private"}, kernel_ctx)).output == "_private: int = 1"
    assert (await VariablesTool().run({"name": "np"}, kernel_ctx)).output.startswith("np: module")
