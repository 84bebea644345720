"""Code a rule cannot see: interpreters given code, and programs told to run commands of their choosing."""

import pytest

from opencode_nb.tool.support.hidden import sed_runs_commands
from opencode_nb.tool.support.shell import parse_command


def reasons(line: str) -> list[str]:
    return [h.reason for h in parse_command(line).hidden]


@pytest.mark.parametrize("line", [
    "python3 -c 'x'", "python3 -Ic 'x'", "python -B -c x", "python3.11 -c x", "/usr/bin/python3 -c x",
    "python3 - <<'EOF'\nx\nEOF", "echo x | python3", "python3 <<< x", "python3 <(echo x)",
    "python3 /dev/stdin <<< x", "perl -e x", "perl -lne x", "perl -MPOSIX -e x", "perl -M'POSIX; x' -E 1",
    "echo x | perl", "ruby -e x", "node -e x", "node --eval x", "node -p x", "echo x | node", "php -r x",
    "lua -e x", "Rscript -e x", "R --vanilla < x.R", "julia -e x", "tclsh <<< x", "expect -c x",
    "awk 'BEGIN{system(\"x\")}'", "awk '{print | \"sh\"}'", "gawk -e 'BEGIN{system(\"x\")}'",
    "sed -n '1e x' f", "sed 's/a/b/e' f", "sed --expression='1e x' f", "sqlite3 :memory: '.shell x'",
    "echo '.shell x' | sqlite3", "tar -cf a.tar f --checkpoint-action=exec=x", "tar --to-command=x -xf a.tar",
    "tar -I x -cf a.tar f", "source x.sh", ". x.sh", "git -c alias.x='!x' x", "git config alias.p push",
    "git -c core.fsmonitor=x status", "git config --file .git/config core.hooksPath hooks", "git frobnicate",
    "PAGER=x git log", "LD_PRELOAD=x.so ls", "export BASH_ENV=x", "GIT_CONFIG_COUNT=1 git status",
    "rsync -e 'sh -c x' a b", "zip -TT x a.zip f", "vim -c '!x' f", "declare -i n=1", "let n++",
])
def test_code_no_rule_sees_is_hidden(line):
    assert reasons(line), line


@pytest.mark.parametrize("line", [
    "python3 train.py --epochs 3", "python -m pytest -q", "python -m py_compile \"$f\"", "python3 --version",
    "perl script.pl", "node app.js", "awk '{print $1}' data.csv", "awk -F, -f prog.awk data.csv",
    "sed -n '1,5p' f", "sed -i 's/a/b/g' f", "sed -e 's/e/E/' -e '/x/d' f", "tar -czf a.tgz src",
    "git config --get alias.x", "git config user.name me", "git -c color.ui=never log", "git lfs",
    "sqlite3 db 'select 1'", "bash build.sh", "PYTHONPATH=src python3 train.py", "x=1; echo $((x + 1))",
])
def test_ordinary_calls_hide_nothing(tmp_path, line):
    for name in ("train.py", "prog.awk", "script.pl", "app.js", "build.sh"):
        (tmp_path / name).write_text("")
    found = [h.reason for h in parse_command(line, cwd=tmp_path).hidden]
    assert found == [] or (line == "git lfs" and "not one of git's own" in found[0]), found


def test_a_program_or_script_the_line_makes_before_running_it_is_hidden(tmp_path):
    (tmp_path / "ok.sh").write_text("")
    for line in ("cp /bin/rm del && ./del x", "printf 'rm x' > s.sh && bash s.sh", "echo x > x.py; python3 x.py"):
        assert any("does not exist yet" in r for r in [h.reason for h in parse_command(line, cwd=tmp_path).hidden])
    assert not parse_command("bash ok.sh && ./ok.sh", cwd=tmp_path).hidden


@pytest.mark.parametrize(("script", "runs"), [
    ("1e rm x", True), ("s/a/b/e", True), ("s/a/b/ge", True), ("/x/e cmd", True), ("$!e", True),
    ("s/e/E/", False), ("/e/d", False), ("s/a/b/w out", False), ("y/abc/xyz/", False), ("1,5p", False),
    ("a\\\nappended e", False), ("s|/e|x|g", False),
])
def test_sed_scripts_run_commands_only_through_e(script, runs):
    assert sed_runs_commands(script) is runs
