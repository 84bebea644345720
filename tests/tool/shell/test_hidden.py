"""Code a rule cannot see: interpreters given code, programs told to run commands of their choosing, and code the
project holds (scripts, Makefiles, modules python finds first, variables pointing programs at code)."""

import pytest

from opencode_nb.tool.shell.hidden import sed_runs_commands
from opencode_nb.tool.shell.parse import parse_command
from opencode_nb.tool.shell.project_code import CODE_VARIABLES, PROJECT_RUNNERS


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
    "echo '.shell x' | sqlite3", "tar -cf a.tar f --checkpoint-action=exec=\"$x\"", "tar --to-command=\"$x\" -xf a.tar",
    "tar -I 'python3 -c x' -cf a.tar f", "source x.sh", ". x.sh", "git -c alias.x='!x' x", "git config alias.p push",
    "git -c core.fsmonitor=x status", "git config --file .git/config core.hooksPath hooks", "git frobnicate",
    "PAGER=x git log", "LD_PRELOAD=x.so ls", "export BASH_ENV=x", "GIT_CONFIG_COUNT=1 git status",
    "rsync -e \"$x\" a b", "zip -TT \"$x\" a.zip f", "vim -c '!x' f", "declare -i n=1", "let n++",
])
def test_code_no_rule_sees_is_hidden(line):
    assert reasons(line), line


@pytest.mark.parametrize("line", [
    "python3 --version", "python3 -I -m json.tool data.json", "python3 -P -m http.server", "awk '{print $1}' d.csv",
    "sed -n '1,5p' f", "sed -i 's/a/b/g' f", "sed -e 's/e/E/' -e '/x/d' f", "tar -czf a.tgz src",
    "git config --get alias.x", "git config user.name me", "git -c color.ui=never log", "git lfs",
    "sqlite3 db 'select 1'", "x=1; echo $((x + 1))", "make --version", "npm --version", "npm ls", "pip list",
    "go env GOPATH", "cmake --help", "GIT_AUTHOR_NAME=me git commit -m x", "PYTHONUNBUFFERED=1 python3 -V",
])
def test_ordinary_calls_hide_nothing(line):
    found = reasons(line)
    assert found == [] or (line == "git lfs" and "not one of git's own" in found[0]), found


@pytest.mark.parametrize("line", [
    "python3 train.py --epochs 3", "python -m pytest -q", "python3 -m this", "python3 -m pickle x.pkl",
    "python3 -I -m doctest d.txt", "python3 -P -m unittest", "perl script.pl", "perl -c script.pl", "node app.js",
    "php -f x.php", "bash build.sh", "sh ./build.sh", "awk -F, -f prog.awk data.csv", "sed -f s.sed f", "make",
    "make -C sub", "make -n", "npm test", "npm run build", "npx jest", "pytest -q", "cmake -P x.cmake", "ninja",
    "pip install .", "PYTHONPATH=src python3 -V", "PYTHONPATH=. pip --version", "export PYTHONPATH=$PWD",
    "XDG_CONFIG_HOME=$PWD git status", "env XDG_CONFIG_HOME=. git status", "GIT_EXEC_PATH=. git fetch",
    "LD_BIND_NOW=1 ls", "PERL5LIB=. ls", "npm_config_script_shell=./x npm --version", "CC=./cc make --version",
    "git -c gpg.ssh.defaultKeyCommand=x commit -S", "git -c trailer.x.command=y interpret-trailers",
])
def test_code_the_project_holds_is_hidden(tmp_path, line):
    for name in ("train.py", "prog.awk", "script.pl", "app.js", "build.sh", "x.pkl", "d.txt", "x.php", "s.sed"):
        (tmp_path / name).write_text("")
    assert [h.reason for h in parse_command(line, cwd=tmp_path).hidden], line


@pytest.mark.parametrize("name", sorted(PROJECT_RUNNERS))
def test_every_program_of_the_runners_table_runs_project_code_unless_asked_only_its_version(name):
    assert reasons(name) and reasons(f"{name} anything"), name
    assert reasons(f"{name} --version") == [], name


@pytest.mark.parametrize(("prefix", "inert"), sorted(CODE_VARIABLES.items()))
def test_every_variable_family_of_the_table_points_programs_at_code(prefix, inert):
    assert reasons(f"{prefix}X=1 ls") and reasons(f"export {prefix.lower()}X=1"), prefix
    for name in inert:
        assert reasons(f"{name}=1 ls") == [], name


def test_a_program_or_script_the_line_makes_before_running_it_is_hidden(tmp_path):
    (tmp_path / "ok.sh").write_text("")
    for line in ("cp /bin/rm del && ./del x", "printf 'rm x' > s.sh && bash s.sh", "echo x > x.py; python3 x.py"):
        assert any("does not exist yet" in r for r in [h.reason for h in parse_command(line, cwd=tmp_path).hidden])
    already = [h.reason for h in parse_command("bash ok.sh", cwd=tmp_path).hidden]
    assert already and not any("does not exist yet" in r for r in already)


@pytest.mark.parametrize(("script", "runs"), [
    ("1e rm x", True), ("s/a/b/e", True), ("s/a/b/ge", True), ("/x/e cmd", True), ("$!e", True),
    ("s/e/E/", False), ("/e/d", False), ("s/a/b/w out", False), ("y/abc/xyz/", False), ("1,5p", False),
    ("a\\\nappended e", False), ("s|/e|x|g", False),
])
def test_sed_scripts_run_commands_only_through_e(script, runs):
    assert sed_runs_commands(script) is runs
