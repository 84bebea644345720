"""Which names a cell reads and binds, from its text alone."""

from __future__ import annotations

import pytest

from opencode_nb.kernel.fix.reads import binds, parse, reads


def read(source: str) -> list[str]:
    tree = parse(source)
    assert tree is not None
    return reads(tree)


def test_a_cell_reads_the_names_it_loads_in_the_order_it_first_reads_them():
    assert read('total = df["revenue"].sum() / rate\nprint(total)') == ["df", "rate", "print"]


def test_a_name_the_cell_binds_before_using_it_is_not_a_read():
    assert read("df = load('x.csv')\ndf.head()") == ["load"]


def test_an_assignment_reads_its_value_before_it_binds_its_target():
    assert read("total = total + 1") == ["total"]
    assert read("count += 1") == ["count"]


def test_a_loop_reads_its_iterable_first_and_binds_its_variable():
    assert read("for row in rows:\n    out.append(row)") == ["rows", "out"]


def test_names_local_to_a_function_lambda_or_comprehension_are_not_reads():
    source = ("def f(x, *, scale=factor):\n    y = x * 2\n    return y + offset\n"
              "squares = [i * i for i in data]\ng = lambda a: a + b")
    assert read(source) == ["factor", "offset", "data", "b"]


def test_a_function_body_reads_the_names_the_cell_had_not_bound_before_the_def():
    assert read("def f():\n    return seen + later\nseen = 1\nlater = 2") == ["seen", "later"]
    assert read("seen = 1\ndef f():\n    return seen") == []


def test_imports_with_and_except_bind_their_names():
    source = ("import numpy as np\nfrom pathlib import Path\nwith open(p) as fh:\n    fh.read()\n"
              "try:\n    np.log(x)\nexcept ValueError as err:\n    print(err)")
    assert read(source) == ["open", "p", "x", "ValueError", "print"]


def test_attributes_and_subscripts_read_only_their_base_name():
    assert read("df.groupby(key)['amount'].agg(np.mean)") == ["df", "key", "np"]


def test_binds_are_the_cells_top_level_names_only():
    tree = parse("import pandas as pd\ndf = pd.DataFrame()\nfor i in range(3):\n    last = i\n"
                 "def helper(z):\n    inner = z\nclass Model:\n    field = 1\n[w for w in df]")
    assert tree is not None
    assert binds(tree) == {"pd", "df", "i", "last", "helper", "Model"}


@pytest.mark.parametrize("source", ["df[", "%matplotlib inline"])
def test_a_cell_that_is_not_python_has_no_tree(source: str):
    assert parse(source) is None
