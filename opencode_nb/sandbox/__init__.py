"""What the operating system enforces around code we run but do not trust.

Two users share it, so it sits below both the tools and the kernel:

- a forked kernel running the model's Python: `confine` puts it behind the strongest confinement this machine
  offers (namespaces or Landlock, then seccomp, with shared mappings made private: `linux`, `landlock`,
  `seccomp`, `mappings`) and reports which one applied;
- shell commands (and the python worker): `policy` decides how a command runs (`sandbox: off|auto|required`)
  and builds the bubblewrap (`bwrap`) or Seatbelt (`seatbelt`) command line; `protected` keeps the files that
  steer the agents read-only, `readable` shows only what the `external_directory` rules allow, `hosts`,
  `proxy` and `relay` give the network host by host; `status` says in a line which sandbox is in force;
  `treatment` is the one door every process we start goes through (bash, command templates, MCP servers), so
  each gets all of it, and is a run in flight for the config guard while it lives.

The mechanisms know nothing of agents, tools or kernels; the shell side reads permission rules and
configuration, nothing above them.
"""
