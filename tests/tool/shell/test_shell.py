"""How a shell line meets the permission rules: `command_patterns` and the paths it would touch."""

from pathlib import Path

import pytest

from opencode_nb.permission import evaluate, from_config
from opencode_nb.tool.bash import command_patterns
from opencode_nb.tool.shell.arity import always_prefix
from opencode_nb.tool.shell.parse import parse_command
from opencode_nb.tool.shell.shell_paths import check_paths, outside_paths


@pytest.mark.parametrize(("command", "patterns", "always"), [
    ("ls -la", ["ls -la"], ["ls *"]),
    ("git checkout main", ["git checkout main"], ["git checkout *"]),
    ("npm run build", ["npm run build"], ["npm run build *"]),
    ("a && b; c | d", ["a", "b", "c", "d"], ["a *", "b *", "c *", "d *"]),
    ("a || b |& c", ["a", "b", "c"], ["a *", "b *", "c *"]),
    ("echo $(whoami)", ["echo $(whoami)", "whoami"], ["echo *", "whoami *"]),
    ("echo `date`", ["echo `date`", "date"], ["echo *", "date *"]),
    ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"], ["diff *", "ls *"]),
    ("(cd x && rm y)", ["rm y"], ["rm *"]),
    ("env FOO=1 python x.py", ["env FOO=1 python x.py", "python x.py"], ["env *", "python x.py *"]),
    ("sudo rm -rf /", ["sudo rm -rf /", "rm -rf /"], ["sudo *", "rm *"]),
    ("sudo -u postgres psql", ["sudo -u postgres psql", "psql"], ["sudo *", "psql *"]),
    ("time make test", ["time make test", "make test"], ["time *", "make test *"]),
    ("nohup python serve.py", ["nohup python serve.py", "python serve.py"], ["nohup *", "python serve.py *"]),
    ("find . -name '*.pyc' | xargs -n1 rm -f", ["find . -name '*.pyc'", "xargs -n1 rm -f", "rm -f <input>"],
     ["find *", "xargs *", "rm *"]),
    ("timeout 5 curl example.com", ["timeout 5 curl example.com", "curl example.com"], ["timeout *", "curl *"]),
    ("find . -name '*.tmp' -exec rm {} \\;", ["find . -name '*.tmp' -exec rm {} \\;",
                                           "find . -name '*.tmp' -exec rm '{}' ';'", "rm {}"], ["find *", "rm *"]),
    ("bash -c 'ls && rm x'", ["bash -c 'ls && rm x'", "ls", "rm x"], ["bash *", "ls *", "rm *"]),
    ("for f in *.py; do black $f; done", ["black $f"], ["black *"]),
    ("if [ -f x ]; then rm x; fi", ["[ -f x ]", "rm x"], ["rm *"]),
    ("git   status  ", ["git status"], ["git status *"]),
    ("cd src", [], []),
])
def test_each_simple_command_is_checked_on_its_own(command, patterns, always):
    assert command_patterns(command) == (patterns, always)


@pytest.mark.parametrize(("words", "prefix"), [
    ("git checkout main", "git checkout *"),
    ("git remote add origin x", "git remote add *"),
    ("npm run build -- --watch", "npm run build *"),
    ("npm install", "npm install *"),
    ("pnpm run test", "pnpm run test *"),
    ("yarn add left-pad", "yarn add *"),
    ("pip install -r requirements.txt", "pip install *"),
    ("uv pip install pandas", "uv pip install *"),
    ("uv run pytest", "uv run pytest *"),
    ("python -m pytest -q", "python -m pytest *"),
    ("python -m pip install x", "python -m pip install *"),
    ("python script.py", "python script.py *"),
    ("python -c print(1)", "python -c *"),
    ("python3 -c print(1)", "python3 -c *"),
    ("node -e console.log(1)", "node -e *"),
    ("Rscript -e 1", "Rscript -e *"),
    ("docker compose up -d", "docker compose up *"),
    ("docker run -it ubuntu", "docker run *"),
    ("kubectl get pods", "kubectl get *"),
    ("kubectl get svc -n prod", "kubectl get *"),
    ("kubectl describe pod api-7f", "kubectl describe *"),
    ("kubectl logs -f api-7f", "kubectl logs *"),
    ("kubectl delete pod api-7f", "kubectl delete *"),
    ("kubectl apply -f x.yaml", "kubectl apply *"),
    ("kubectl rollout restart deploy/api", "kubectl rollout restart *"),
    ("npx prettier --write .", "npx *"),
    ("npx -y create-vite app", "npx *"),
    ("bunx vite", "bunx *"),
    ("uvx ruff check", "uvx *"),
    ("pipx run black .", "pipx run *"),
    ("pnpm dlx create-next-app", "pnpm dlx *"),
    ("npm exec vite", "npm exec *"),
    ("cargo build --release", "cargo build *"),
    ("go test ./...", "go test *"),
    ("go mod tidy", "go mod tidy *"),
    ("make", "make *"),
    ("jupyter nbconvert --to html a.ipynb", "jupyter nbconvert *"),
    ("conda env create -f env.yml", "conda env create *"),
    ("conda install numpy", "conda install *"),
    ("gh pr list", "gh pr list *"),
    ("ls -la", "ls *"),
    ("some-unknown-tool --flag", "some-unknown-tool *"),
])
def test_the_always_prefix_keeps_the_words_that_name_the_action(words, prefix):
    assert always_prefix(words.split()) == prefix


@pytest.mark.parametrize(("command", "patterns", "always"), [
    ("echo test > output.txt", ["echo test > output.txt", "echo test"], ["echo *"]),
    ("cat > /tmp/output.txt", ["cat > /tmp/output.txt", "cat"], ["cat *"]),
    ("echo hi >> out.txt 2>&1 < in.txt", ["echo hi >> out.txt 2>&1 < in.txt", "echo hi", "echo hi > out.txt"],
     ["echo *"]),
    ("echo hi>out.txt", ["echo hi>out.txt", "echo hi", "echo hi > out.txt"], ["echo *"]),
    ("FOO=1 npm test", ["FOO=1 npm test", "npm test"], ["npm test *"]),
    ("FOO=1 BAR='a b' make test", ["FOO=1 BAR='a b' make test", "make test"], ["make test *"]),
    ("cat <<< 'hi'", ["cat <<< 'hi'", "cat"], ["cat *"]),
    ("ls && rm x > log", ["ls", "rm x > log", "rm x"], ["ls *", "rm *"]),
    ("grep x a | sort > out", ["grep x a", "sort > out", "sort"], ["grep *", "sort *"]),
    ("rm  -rf \\\n  build   2>/dev/null", ["rm -rf build 2>/dev/null", "rm -rf build"], ["rm *"]),
])
def test_a_command_is_checked_as_written_with_its_assignments_and_redirections_and_as_its_bare_words(
        command, patterns, always):
    assert command_patterns(command) == (patterns, always)


def test_a_here_document_adds_its_marker_but_not_its_body_to_the_pattern():
    patterns, always = command_patterns("cat <<EOF > notes.txt\nhello $(whoami)\nEOF\n")
    assert patterns == ["cat <<EOF > notes.txt", "cat", "whoami"] and always == ["cat *", "whoami *"]
    assert command_patterns("cat <<EOF | grep x > out\nhi\nEOF\n")[0] == ["cat <<EOF", "cat", "grep x > out", "grep x"]


def test_words_after_a_redirection_target_are_the_commands_arguments():
    assert command_patterns("rm > /dev/null -rf build") == (["rm > /dev/null -rf build", "rm -rf build"], ["rm *"])


@pytest.mark.parametrize("command", ["FOO=1 rm x", "rm x > log", "FOO=1 rm -rf x 2>&1 > log", "ls && rm x > log",
                                     "rm > /dev/null x", "sudo rm x > log", "bash -c 'FOO=1 rm x'"])
def test_a_deny_rule_on_the_command_holds_whatever_assignments_or_redirections_surround_it(command):
    rules = from_config({"bash": {"*": "allow", "rm *": "deny"}})
    patterns, _ = command_patterns(command)
    assert "deny" in [evaluate("bash", p, rules).action for p in patterns]


def test_a_rule_may_name_a_redirection():
    rules = from_config({"bash": {"*": "allow", "* > /etc/*": "deny"}})
    patterns, _ = command_patterns("echo x > /etc/hosts")
    assert [evaluate("bash", p, rules).action for p in patterns] == ["deny", "allow"]


def test_an_always_prefix_allows_what_it_promises_and_nothing_more():
    rules = from_config({"bash": {"*": "ask", "git checkout *": "allow"}})
    assert evaluate("bash", "git checkout feature/x", rules).action == "allow"
    assert evaluate("bash", "git push", rules).action == "ask"


def test_an_unparseable_line_is_its_own_pattern_and_is_flagged():
    parsed = parse_command("echo 'unclosed && rm -rf /")
    assert not parsed.parsed and "could not be parsed" in (parsed.reason or "")
    assert parsed.patterns[0] == "echo 'unclosed && rm -rf /" and parsed.always == []
    assert command_patterns("ls $(")[0][0] == "ls $("


def test_shell_text_only_known_at_run_time_cannot_be_checked_and_literal_text_is():
    [hidden] = parse_command('eval "$CMD"').hidden
    assert "only known when the line runs" in hidden.reason and hidden.pattern == 'eval "$CMD"'
    assert "only known when the line runs" in parse_command('bash -c "$SCRIPT"').unknown[0]
    assert parse_command("eval 'ls -la'").patterns == ["eval 'ls -la'", "ls -la"]


def test_a_wrapped_command_meets_the_rules_for_the_inner_command_too():
    rules = from_config({"bash": {"*": "allow", "rm *": "deny"}})
    patterns, _ = command_patterns("sudo rm -rf /")
    assert [evaluate("bash", p, rules).action for p in patterns] == ["allow", "deny"]


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    return root


def outside(command: str, root: Path) -> list[Path]:
    return outside_paths(parse_command(command), root, root)


def test_paths_inside_the_workspace_are_fine(root):
    assert outside("ls src && cat src/a.py && rm -rf build/* && touch new.txt 2>/dev/null", root) == []


def test_file_command_arguments_outside_the_workspace_are_found(root, tmp_path):
    assert outside(f"cat {tmp_path}/notes.txt", root) == [tmp_path / "notes.txt"]
    assert outside("cp src/a.py ../backup.py", root) == [tmp_path / "backup.py"]
    assert check_paths(parse_command("rm -rf ~/.cache/x"), root, root).unknown == ["~/.cache/x"]


def test_wildcards_cut_the_path_and_dynamic_arguments_are_skipped(root, tmp_path):
    assert outside(f"rm -rf {tmp_path}/*", root) == [tmp_path]
    assert outside("rm -rf $DIR/x *.log", root) == []


def test_redirections_to_files_outside_are_found_but_not_dev_null(root, tmp_path):
    assert outside(f"echo hi > {tmp_path}/out.txt 2>&1", root) == [tmp_path / "out.txt"]
    assert outside("make 2>/dev/null >&2", root) == []


def test_wrapped_and_nested_commands_are_checked_for_paths(root, tmp_path):
    assert outside(f"sudo rm {tmp_path}/x", root) == [tmp_path / "x"]
    assert outside(f"echo $(cat {tmp_path}/secret)", root) == [tmp_path / "secret"]


# ------------------------------------------------------------------------------------ no line runs unchecked

@pytest.mark.parametrize(("line", "pattern"), [
    ("x=1", "x=1"), ("A=1 B=2", "A=1 B=2"), ("declare -r X=1", "declare -r X=1"), ("export A=b", "export A=b"),
    ("unset x", "unset x"), ("(( 1 + 2 ))", "(( 1 + 2 ))"), ("[[ -f x ]]", "[[ -f x ]]"), ("[ -d y ]", "[ -d y ]"),
    ("> out.txt", "> out.txt"), ("for ((i=0;i<3;i++)); do :; done", "for ((i=0;i<3;i++))"),
])
def test_a_statement_with_no_command_word_is_checked_whole(line, pattern):
    assert pattern in command_patterns(line)[0]


@pytest.mark.parametrize("line", ["x=1", "(( y ))", "[[ $a == b ]]", "> f", "declare x", "f() { :; }", "# just a note"])
def test_every_line_that_can_do_anything_gives_a_pattern(line):
    patterns, _ = command_patterns(line)
    assert patterns or line.startswith("#")


def test_commands_hidden_in_statements_are_commands_too():
    for line in ("x=$(rm v)", "declare x=$(rm v)", "(( $(rm v) ))", "[[ $(rm v) ]]", "> $(rm v)", "a[$(rm v)]=1"):
        assert "rm v" in command_patterns(line)[0], line


# ------------------------------------------------------------------------------------ rules see what runs

DENY_RM = from_config({"bash": {"*": "allow", "rm *": "deny"}})


@pytest.mark.parametrize("line", [
    '"rm" v', "'rm' v", "r''m v", "\\rm v", "$'\\x72m' v", "/bin/rm v", "/usr/bin/../bin/rm v", "r{m,} v",
    "FOO=1 rm v", "rm v > log", "x=1 && rm v", "(rm v)", "{ rm v; }", "f() { rm v; }", "echo $(rm v)",
    "trap 'rm v' EXIT", "bash -c -- 'rm v'", "env -S 'rm v'", "find . -exec rm {} +", "echo v | xargs rm",
    "mapfile -C 'rm v #' -c 1 a < f", "alias r=rm; r v",
])
def test_a_denied_program_is_denied_however_it_is_spelled(line):
    assert "deny" in [evaluate("bash", p, DENY_RM).action for p in command_patterns(line)[0]], line


@pytest.mark.parametrize("line", [
    "$x v", "${x:-rm} v", "$(echo rm) v", "`echo rm` v", "rm${IFS}v", "/bin/r? v", "/bin/r[m] v", "\"$@\"",
    "hash -p /bin/rm r; r v", "PATH=/tmp/x:$PATH ls", "shopt -s expand_aliases", "env $cmd v", "r\\\nm v",
])
def test_a_program_only_the_run_can_name_makes_the_line_ask(line):
    parsed = parse_command(line)
    assert parsed.unknown or not parsed.parsed, line


def test_a_symbolic_link_to_a_program_is_checked_as_that_program(tmp_path):
    (tmp_path / "del").symlink_to("/bin/rm")
    patterns, _ = command_patterns_in(tmp_path, "./del v")
    assert "deny" in [evaluate("bash", p, DENY_RM).action for p in patterns]


def command_patterns_in(cwd: Path, line: str) -> tuple[list[str], list[str]]:
    parsed = parse_command(line, cwd=cwd)
    return parsed.patterns, parsed.always
