"""Arithmetic runs a command hidden in a value (`y='a[$(rm x)]'; (( y ))`): harmless only on numbers and
variables the line gives integers."""

import pytest

from opencode_nb.tool.shell.parse import parse_command


@pytest.mark.parametrize("line", [
    "y='a[$(rm v)]'; (( y ))", "y=$(cat f); (( y > 1 ))", "read y; [[ $y -eq 1 ]]", "[[ y -gt 0 ]] || y=a",
    "echo $(( $1 + 1 ))", "for ((; y; )); do :; done; y=x", "i=$(cat f); echo ${arr[$i]}", "o=$1; echo ${s:o:1}",
    "i=a; arr[i]=1",
    "echo ${!name}", "x='$(rm v)'; echo ${x@P}", "test -v 'a[$(rm v)]'", "[[ -v a[$i] ]]", "let n++",
    "declare -i n", "y=$1; echo $((y))", "eval 'x=1'; echo $((x))", "declare -n r=x; echo $((r))",
])
def test_arithmetic_on_values_that_may_hide_a_command_is_hidden(line):
    assert parse_command(line).hidden, line


@pytest.mark.parametrize("line", [
    "(( 1 + 2 ))", "echo $((3 * 4))", "for ((i = 0; i < 10; i++)); do echo $i; done", "n=5; echo $((n * 2))",
    "[[ 3 -lt 4 ]]", "[[ -f setup.py ]] && echo yes", "[ \"$x\" = y ]", "echo ${arr[@]} ${#arr[@]} ${arr[0]}",
    "(( unset_anywhere ))", "x=$((1 + 2)); echo $(( x ))",
])
def test_arithmetic_on_numbers_and_integer_variables_is_harmless(line):
    assert not parse_command(line).hidden, line
