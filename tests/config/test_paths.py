from opencode_nb.config.paths import discover, expand_home, levels, project_root, resolve_instructions


def test_the_project_root_is_the_nearest_ancestor_with_git(tmp_path):
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / "deep").mkdir()
    assert project_root(tmp_path / "outer" / "inner" / "deep") == tmp_path / "outer" / "inner"
    assert project_root(tmp_path) == tmp_path


def test_levels_run_from_the_root_down_to_the_directory(tmp_path):
    assert levels(tmp_path / "a" / "b", tmp_path) == [tmp_path, tmp_path / "a", tmp_path / "a" / "b"]
    assert levels(tmp_path, tmp_path) == [tmp_path]


def test_discovery_lists_global_then_each_level_with_its_dot_opencode(tmp_path):
    files = ["g/opencode.json", "g/agent/a.md", "g/commands/c.md", "p/opencode.yaml", "p/.opencode/opencode.yml",
             "p/.opencode/agents/team/b.md", "p/.opencode/command/d.md", "p/sub/opencode.json"]
    for name in [*files, "p/.opencode/agent/notes.txt", "p/.opencode/plans/x.md", "p/sub/agent/ignored.md"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    found = discover(tmp_path / "p" / "sub", tmp_path / "p", tmp_path / "g")
    assert [f.path for f in found] == [tmp_path / name for name in files]
    assert [(f.kind, f.name) for f in found if f.kind != "config"] == [
        ("agent", "a"), ("command", "c"), ("agent", "team/b"), ("command", "d")]


def test_instruction_entries_resolve_as_paths_globs_home_and_urls(tmp_path):
    for name in ["docs/a.md", "docs/deep/b.md", "home/h.md", "x.md"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    env = {"HOME": str(tmp_path / "home")}
    resolved = resolve_instructions(["x.md", "docs/**/*.md", "~/h.md", "https://e.com/a.md", "gone.md", "docs"],
                                    tmp_path, env)
    assert resolved == [
        ("x.md", [tmp_path / "x.md"]),
        ("docs/**/*.md", [tmp_path / "docs/a.md", tmp_path / "docs/deep/b.md"]),
        ("~/h.md", [tmp_path / "home/h.md"]),
        ("https://e.com/a.md", None),
        ("gone.md", []),
        ("docs", []),
    ]


def test_only_a_leading_tilde_is_home():
    env = {"HOME": "/h"}
    assert [expand_home(t, env) for t in ["~", "~/x", "~user/x", "a/~/b"]] == ["/h", "/h/x", "~user/x", "a/~/b"]
