"""git as rules see it: the subcommand after git's own options, and the ways git runs other code.

A rule `git push*` must hold for `git -C . push`, `git --no-pager -c color.ui=never push` and `/usr/bin/git
push`, so git's global options are read and dropped: rules see `git push ...`. git also runs commands of
its choosing: an alias (`-c alias.p=push`, or `!cmd` aliases), a pager, an ssh command, a filter, a hook
directory, all set by configuration, inline (`-c`) or just before (`git config alias.p push`). Such a call is
hidden from the rules (`hidden`); commands git is told to run explicitly (`rebase --exec`, `bisect run`,
`submodule foreach`) are checked like any other (`scripts`, `commands`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .options import OptionSpec, scan
from .unwrap import Inner
from .words import Word, literal

GLOBAL_OPTIONS = OptionSpec(values="Cc", long_values=frozenset({"--git-dir", "--work-tree", "--namespace",
                                                               "--super-prefix", "--config-env", "--list-cmds"}))

_BUILTIN_NAMES = """
add am annotate apply archive backfill bisect blame branch bugreport bundle cat-file check-attr check-ignore
check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit
commit-graph commit-tree config count-objects credential credential-cache credential-store daemon describe
diagnose diff diff-files diff-index diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack
filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc
get-tar-commit-id gitk grep gui hash-object help hook http-backend http-fetch http-push imap-send index-pack
init init-db instaweb interpret-trailers last-modified log ls-files ls-remote ls-tree mailinfo mailsplit
maintenance merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours merge-recursive
merge-recursive-ours merge-recursive-theirs merge-resolve merge-subtree merge-tree mergetool mktag mktree
multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id pickaxe prune
prune-packed pull push quiltimport range-diff read-tree rebase receive-pack reflog refs remote remote-fd
remote-ftp remote-ftps remote-http remote-https repack replace replay repo request-pull rerere reset restore
rev-list rev-parse revert rm send-email send-pack shortlog show show-branch show-index show-ref
sparse-checkout stage stash status stripspace submodule subtree svn switch symbolic-ref tag unpack-file
unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit
verify-pack verify-tag version whatchanged worktree write-tree
"""
BUILTIN_COMMANDS = frozenset(_BUILTIN_NAMES.split())
"""git's own commands. Any other word there is an alias or a `git-<name>` program found on PATH: what it runs
is not known from the line."""

_CODE_KEY = re.compile(r"""(?ix)^(?:
    alias\..+
  | core\.(?:pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)
  | diff\.external | diff\..+\.(?:textconv|command)
  | filter\..+\.(?:clean|smudge|process)
  | merge\..+\.driver
  | credential\.helper | credential\..+\.helper
  | sequence\.editor
  | gpg\.program | gpg\..+\.program | gpg\.ssh\.defaultkeycommand
  | trailer\..+\.(?:command|cmd) | imap\.tunnel | tar\..+\.command | hook\..+\.command | guitool\..+\.cmd
  | pager\..+
  | interactive\.difffilter
  | uploadpack\.packobjectshook
  | remote\..+\.(?:uploadpack|receivepack)
  | protocol\.allow | protocol\..+\.allow
  | (?:difftool|mergetool)\..+\.(?:cmd|path)
  | web\.browser | browser\..+\.(?:cmd|path)
  | man\.viewer | man\..+\.(?:cmd|path)
  | include\.path | includeif\..+\.path
  | init\.templatedir
  | submodule\..+\.update
  | sendemail\.(?:.+\.)?(?:tocmd|cccmd|sendmailcmd|smtpserver)
  | instaweb\..+
)$""")
"""Configuration that makes git run a program or a command line of the configuration's choosing."""

_READ_ONLY_CONFIG = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l",
                               "--show-origin", "--show-scope", "--name-only", "get", "list"})
_RUNS_SCRIPT = {
    "rebase": ("--exec", "-x"),
    "difftool": ("--extcmd", "-x"),
    "clone": ("--upload-pack", "-u"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack", "--exec"),
    "archive": ("--exec",),
    "push": ("--receive-pack", "--exec"),
    "send-pack": ("--receive-pack", "--exec"),
    "filter-branch": ("--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter",
                      "--commit-filter", "--tag-name-filter"),
}
"""Options whose value is a shell command git runs."""


@dataclass
class GitCall(Inner):
    words: list[Word] = field(default_factory=list)
    """`git <subcommand> <arguments>` without git's global options: what rules about git are matched against."""


def git(words: list[Word]) -> GitCall:
    found = scan(words, 1, GLOBAL_OPTIONS)
    if found is None:
        return GitCall(unknown=["an option of `git` is only known when the line runs, so its subcommand "
                                "cannot be made out"])
    call = GitCall()
    for option in found.options:
        if option.name == "-c":
            _config_key(call, option.value, option.value.value.split("=", 1)[0] if option.value and
                        option.value.value is not None else None, "-c")
        elif option.name == "--config-env":
            value = option.value.value if option.value is not None else None
            _config_key(call, option.value, value.split("=", 1)[0] if value is not None else None,
                        "--config-env")
        elif option.name == "--exec-path" and option.value is not None:
            call.unknown.append("`git --exec-path=DIR` runs its subcommands from that directory")
    rest = words[found.operand:]
    if not rest:
        return call
    sub = rest[0]
    call.words = [words[0], *rest]
    if sub.value is None or sub.glob:
        call.unknown.append("git's subcommand is only known when the line runs")
        return call
    name = sub.value
    if name not in BUILTIN_COMMANDS:
        call.hidden.append(f"`git {name}` is not one of git's own commands: it is an alias or another program, "
                           "which the rules cannot see")
        return call
    _subcommand(call, name, rest)
    return call


def _config_key(call: GitCall, word: Word | None, key: str | None, how: str) -> None:
    if key is None:
        call.hidden.append(f"`git {how}` sets configuration only known when the line runs")
    elif _CODE_KEY.match(key):
        call.hidden.append(f"`git {how} {key}=…` makes git run a command of the configuration's choosing")


def _subcommand(call: GitCall, name: str, rest: list[Word]) -> None:
    values = [w.value for w in rest]
    if name == "config":
        if not _READ_ONLY_CONFIG & {v for v in values if v is not None}:
            if {"--edit", "-e", "edit"} & {v for v in values if v is not None}:
                call.hidden.append("`git config --edit` runs an editor")
            for word in rest[1:]:
                if word.value is None:
                    call.hidden.append("`git config` sets a key only known when the line runs")
                    break
                if _CODE_KEY.match(word.value):
                    call.hidden.append(f"`git config {word.value}` makes git run a command of the configuration's "
                                       "choosing")
                    break
        return
    if name == "clone":
        for i, value in enumerate(values):
            if value in ("-c", "--config") and i + 1 < len(rest):
                _config_key(call, rest[i + 1], (values[i + 1] or "").split("=", 1)[0] or None, "clone -c")
            elif value is not None and value.startswith(("--config=", "--template")):
                if value.startswith("--template"):
                    call.hidden.append("`git clone --template` installs hooks git then runs")
                else:
                    _config_key(call, None, value[len("--config="):].split("=", 1)[0], "clone --config")
    if name == "bisect" and len(rest) > 2 and values[1] == "run":
        call.commands.append(rest[2:])
    if name == "submodule" and "foreach" in values:
        after = rest[values.index("foreach") + 1:]
        after = [w for w in after if w.value not in ("--recursive", "--quiet", "-q")]
        if after:
            call.scripts.append(after[0] if len(after) == 1 else literal(" ".join(w.shown for w in after)))
    if name == "grep":
        for value in values:
            if value is not None and (value.startswith("-O") or value.startswith("--open-files-in-pager")):
                pager = value[2:] if value.startswith("-O") else value.partition("=")[2]
                if pager:
                    call.scripts.append(literal(pager))
                else:
                    call.hidden.append("`git grep -O` opens the files in a pager")
    for option in _RUNS_SCRIPT.get(name, ()):
        for i, value in enumerate(values):
            if value == option and i + 1 < len(rest):
                call.scripts.append(rest[i + 1])
            elif value is not None and value.startswith(option + "=") and option.startswith("--"):
                call.scripts.append(literal(value[len(option) + 1:]))
            elif option.startswith("-") and not option.startswith("--") and value is not None and \
                    value.startswith(option) and len(value) > 2:
                call.scripts.append(literal(value[2:]))
