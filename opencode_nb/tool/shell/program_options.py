"""The real options of the programs that run a command after their own: where that command begins.

`timeout --sig KILL 5 rm x` runs `rm x` because `--sig` is GNU's abbreviation of `--signal`, which takes
`KILL`; read as an unknown flag it would seem to run `KILL`. GNU programs read options with getopt_long, which
accepts any unambiguous prefix of a long option, so each table here lists every option the program has and
whether it takes a value; `options.scan` resolves prefixes against it, and an option missing from it is
doubtful (it may take the next word). `tests/tool/shell/test_program_options.py` holds each table to the
program's own `--help` where the program is installed.

Long options are written as one string: `name=` takes a value (`--name=v` or `--name v`), `name[=]` takes one
only as `--name=v`, a bare `name` takes none.
"""

from __future__ import annotations

from .options import OptionSpec


def gnu(long: str, values: str = "", flags: str = "", attached: str = "", digits: str = "",
        dash_number: bool = False) -> OptionSpec:
    """A getopt_long program's options.

    Args:
        long: its long options, space separated, each `name=`, `name[=]` or `name`.
        values: short options taking a value (`-s KILL`, `-sKILL`).
        flags: short options taking none.
        attached: short options taking a value only in the same word (`-i.bak`).
        digits: short options taking an optional number in the same word (`-l0`).
        dash_number: `-10` is an option (`nice -10 cmd`).
    """
    with_value = frozenset(f"--{n[:-1]}" for n in long.split() if n.endswith("=") and not n.endswith("[="))
    without = frozenset(f"--{n.removesuffix('[=]')}" for n in long.split() if not n.endswith("=") or
                        n.endswith("[=]"))
    return OptionSpec(values=values, flags=flags, attached=attached, digits=digits, long_values=with_value,
                      long_flags=without, dash_number=dash_number, getopt_long=True)


_STANDARD = "help version"

_SU = ("preserve-environment whitelist-environment= group= supp-group= command= session-command= fast login "
       "shell= pty " + _STANDARD)

PROGRAM_OPTIONS: dict[str, OptionSpec] = {
    "timeout": gnu("kill-after= signal= foreground preserve-status verbose " + _STANDARD, values="ks", flags="v"),
    "nice": gnu("adjustment= " + _STANDARD, values="n", dash_number=True),
    "env": gnu("ignore-environment null unset= chdir= split-string= argv0= block-signal[=] default-signal[=] "
               "ignore-signal[=] list-signal-handling debug " + _STANDARD, values="uCSa", flags="i0v"),
    "xargs": gnu("null arg-file= delimiter= eof[=] replace[=] max-lines[=] max-args= open-tty max-procs= "
                 "interactive process-slot-var= no-run-if-empty max-chars= show-limits verbose exit " + _STANDARD,
                 values="adEILnPs", flags="0oprtx", attached="ei", digits="l"),
    "flock": gnu("shared exclusive unlock nonblock nb timeout= wait= conflict-exit-code= close command= no-fork "
                 "verbose " + _STANDARD, values="wEc", flags="sexunoFhV"),
    "stdbuf": gnu("input= output= error= " + _STANDARD, values="ioe"),
    "nohup": gnu(_STANDARD),
    "setsid": gnu("ctty fork wait " + _STANDARD, flags="cfwhV"),
    "taskset": gnu("all-tasks pid cpu-list " + _STANDARD, flags="apchV"),
    "ionice": gnu("class= classdata= pid= pgid= ignore uid= " + _STANDARD, values="cnpPu", flags="thV"),
    "chrt": gnu("batch deadline fifo idle other rr reset-on-fork sched-runtime= sched-period= sched-deadline= "
                "all-tasks max pid verbose " + _STANDARD, values="TPD", flags="bdfiorRampvhV"),
    "unshare": gnu("mount[=] uts[=] ipc[=] net[=] pid[=] user[=] cgroup[=] time[=] fork map-user= map-group= "
                   "map-root-user map-current-user map-auto map-users= map-groups= kill-child[=] mount-proc[=] "
                   "mount-binfmt[=] propagation= setgroups= keep-caps root= wd= setuid= setgid= monotonic= "
                   "boottime= load-interp= " + _STANDARD, values="RwSG", flags="frchV", attached="muinpUCT"),
    "chroot": gnu("groups= userspec= skip-chdir " + _STANDARD),
    "script": gnu("log-in= log-out= log-io= log-timing= logging-format= append command= return flush force echo= "
                  "output-limit= quiet timing[=] " + _STANDARD, values="IOBTmEoc", flags="aefqhV", attached="t"),
    "su": gnu(_SU, values="wgGcs", flags="mplfPhV"),
    "runuser": gnu("user= " + _SU, values="wgGcsu", flags="mplfPhV"),
    "watch": gnu("beep color no-color differences[=] errexit chgexit equexit= interval= precise no-rerun no-title "
                 "no-wrap exec " + _STANDARD, values="nq", flags="bcCegprtwxhv", attached="d"),
    "strace": gnu("abbrev= absolute-timestamps[=] attach= columns= const-print-style= daemonize[=] debug "
                  "decode-fds[=] decode-pids= detach-on= env= failed-only fault= follow-forks inject= "
                  "instruction-pointer interruptible= kvm= no-abbrev output-append-mode output-separately output= "
                  "quiet[=] raw= read= relative-timestamps[=] seccomp-bpf signal= stack-traces status= "
                  "string-limit= strings-in-hex[=] successful-only summary summary-columns= summary-only "
                  "summary-sort-by= summary-syscall-overhead= summary-wall-clock syscall-number syscall-times[=] "
                  "tips[=] trace-path= trace= user= verbose= " + _STANDARD,
                  values="abeEIoOpPsSuUX", flags="AcCdDfFhiknqrtTvVwxyYzZ"),
    "sudo": gnu("askpass auth-type= background bell close-from= chdir= preserve-env[=] edit group= set-home "
                "host= login login-class= remove-timestamp reset-timestamp list non-interactive preserve-groups "
                "prompt= chroot= role= stdin shell type= command-timeout= other-user= user= validate " + _STANDARD,
                values="aCcDgpRrTtUu", flags="AbBEeHiKklnPSsVv", attached="h"),
    "setpriv": gnu("dump nnp no-new-privs ambient-caps= inh-caps= bounding-set= ruid= euid= rgid= egid= reuid= "
                   "regid= clear-groups keep-groups init-groups groups= securebits= pdeathsig= selinux-label= "
                   "apparmor-profile= landlock-access= landlock-rule= reset-env " + _STANDARD, flags="dhV"),
    "prlimit": gnu("pid= output= noheadings raw verbose core[=] data[=] nice[=] fsize[=] sigpending[=] memlock[=] "
                   "rss[=] nofile[=] msgqueue[=] rtprio[=] stack[=] cpu[=] nproc[=] as[=] locks[=] rttime[=] "
                   + _STANDARD, values="po", flags="hV", attached="cdefilmnqrstuvxy"),
    "choom": gnu("adjust= pid= " + _STANDARD, values="np", flags="hV"),
    "nsenter": gnu("all target= mount[=] uts[=] ipc[=] net[=] pid[=] cgroup[=] user[=] time[=] setuid= setgid= "
                   "preserve-credentials root[=] wd[=] no-fork follow-context env join-cgroup user-parent keep-caps "
                   + _STANDARD, values="tSG", flags="aFZehcV", attached="muinpCUTrw"),
    "setarch": gnu("32bit fdpic-funcptrs short-inode addr-compat-layout addr-no-randomize whole-seconds "
                   "sticky-timeouts read-implies-exec mmap-page-zero 3gb 4gb uname-2.6 verbose list show[=] "
                   + _STANDARD, flags="BFILRSTXZ3vhV"),
    "runcon": gnu("compute type= user= role= range= " + _STANDARD, values="turl", flags="c"),
}
"""Program → its options, for the programs `unwrap.py` reads to find the command they run."""

BWRAP_ARGUMENTS: dict[str, int] = {
    **dict.fromkeys(("--help", "--version", "--unshare-all", "--share-net", "--unshare-user", "--unshare-user-try",
                     "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup",
                     "--unshare-cgroup-try", "--disable-userns", "--assert-userns-disabled", "--clearenv",
                     "--new-session", "--die-with-parent", "--as-pid-1", "--level-prefix"), 0),
    **dict.fromkeys(("--args", "--argv0", "--userns", "--userns2", "--pidns", "--uid", "--gid", "--hostname",
                     "--chdir", "--unsetenv", "--lock-file", "--sync-fd", "--remount-ro", "--exec-label",
                     "--file-label", "--proc", "--dev", "--tmpfs", "--mqueue", "--dir", "--seccomp",
                     "--add-seccomp-fd", "--block-fd", "--userns-block-fd", "--info-fd", "--json-status-fd",
                     "--cap-add", "--cap-drop", "--perms", "--size", "--overlay-src", "--tmp-overlay",
                     "--ro-overlay"), 1),
    **dict.fromkeys(("--setenv", "--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind",
                     "--ro-bind-try", "--bind-fd", "--ro-bind-fd", "--file", "--bind-data", "--ro-bind-data",
                     "--symlink", "--chmod"), 2),
    "--overlay": 3,
}
"""bwrap's options and how many words each takes: it reads them itself, whole names only."""
