"""How many words name what a command does, for the prefixes an "always" reply grants.

`git checkout main` is `git checkout` acting on `main`: approving it "always" should allow other checkouts,
not every git command, and not only this branch. So the table gives, for a known command prefix, how many
words identify the action: `git` → 2 (`git checkout *`), `npm run` → 3 (`npm run build *`). The longest
known prefix of a command decides; an unknown command keeps only its name (`ls -la` → `ls *`).

Interpreters keep two words, so approving `python train.py` does not approve `python -c '...'`: each gives
its own prefix (`python train.py *`, `python -c *`). Package runners keep only themselves (`npx *`, `uvx *`,
`pipx run *`, `pnpm dlx *`): the package they fetch and run is their argument, as a file is `cat`'s. A
cluster's verbs work on any resource, so `kubectl get pods` offers `kubectl get *`.
"""

from __future__ import annotations

ARITY: dict[str, int] = {
    # version control and hosting
    "git": 2, "git remote": 3, "git stash": 3, "git submodule": 3, "git worktree": 3, "git config": 3,
    "git lfs": 3, "git bisect": 3, "git notes": 3, "git sparse-checkout": 3,
    "gh": 3, "glab": 3, "hg": 2, "svn": 2,
    # JavaScript
    "npm": 2, "npm run": 3, "npm run-script": 3, "npx": 1, "pnpm": 2, "pnpm run": 3, "yarn": 2, "yarn run": 3,
    "yarn workspace": 4, "bun": 2, "bun run": 3, "bunx": 1, "deno": 2, "deno task": 3, "node": 2,
    # Python
    "pip": 2, "pip3": 2, "pipx": 2, "uv": 2, "uv pip": 3, "uv run": 3, "uv tool": 3, "uv python": 3, "uvx": 1,
    "poetry": 2, "poetry run": 3, "poetry env": 3, "pdm": 2, "pdm run": 3, "hatch": 2, "hatch run": 3,
    "hatch env": 3, "conda": 2, "conda env": 3, "mamba": 2, "mamba env": 3, "micromamba": 2, "pixi": 2,
    "pixi run": 3, "python": 2, "python3": 2, "python -m": 3, "python3 -m": 3, "python -m pip": 4,
    "python3 -m pip": 4, "python -m venv": 3, "pre-commit": 2, "ruff": 2, "tox": 1, "nox": 1, "twine": 2,
    # notebooks and data tools
    "jupyter": 2, "jupyter kernelspec": 3, "jupyter labextension": 3, "jupyter nbextension": 3,
    "jupyter server": 3, "papermill": 1, "quarto": 2, "dvc": 2, "mlflow": 2, "dbt": 2, "kaggle": 3,
    "huggingface-cli": 2, "hf": 2,
    # containers and clusters
    "docker": 2, "docker compose": 3, "docker container": 3, "docker image": 3, "docker volume": 3,
    "docker network": 3, "docker buildx": 3, "docker system": 3, "docker-compose": 2, "podman": 2,
    "kubectl": 2, "kubectl config": 3, "kubectl rollout": 3, "kubectl create": 3, "kubectl auth": 3, "helm": 2,
    "helm repo": 3, "minikube": 2, "kind": 3,
    # other languages and builds
    "cargo": 2, "rustup": 2, "go": 2, "go mod": 3, "go tool": 3, "make": 2, "cmake": 1, "just": 2,
    "mvn": 2, "gradle": 2, "./gradlew": 2, "dotnet": 2, "bundle": 2, "bundle exec": 3, "gem": 2, "rake": 2,
    "composer": 2, "swift": 2, "R": 1, "Rscript": 2, "julia": 2, "perl": 2, "ruby": 2,
    # systems and clouds
    "brew": 2, "apt": 2, "apt-get": 2, "dnf": 2, "yum": 2, "pacman": 2, "snap": 2, "systemctl": 2,
    "service": 3, "terraform": 2, "terraform workspace": 3, "tofu": 2, "aws": 3, "gcloud": 3, "gsutil": 2,
    "az": 3, "firebase": 2, "vercel": 2, "heroku": 2, "ssh": 1, "scp": 1,
}
"""Command prefix → how many words of the command the "always" prefix keeps."""

_LONGEST = max(len(key.split()) for key in ARITY)


def arity(keys: list[str]) -> int:
    """How many of a command's words name its action (`git checkout main` → 2); 1 for an unknown command."""
    for size in range(min(len(keys), _LONGEST), 0, -1):
        found = ARITY.get(" ".join(keys[:size]))
        if found is not None:
            return found
    return 1


def always_prefix(words: list[str], values: list[str | None] | None = None) -> str:
    """`words` cut to its arity, plus ` *`: `git checkout main` → `git checkout *`.

    Args:
        words: the command's words as written.
        values: the same words unquoted, when known; the table is looked up with them.
    """
    keys = [v if v is not None else w for w, v in zip(words, values or words, strict=False)]
    return " ".join(words[:arity(keys)]) + " *"
