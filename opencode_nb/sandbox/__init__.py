"""What the operating system enforces around code we run but do not trust: namespaces, Landlock, seccomp.

This part knows nothing of agents, tools or kernels. `confine` puts a forked process behind the strongest
confinement this machine offers and reports which one applied; the other modules are its mechanisms, each
usable alone (the python worker puts the seccomp filter on itself under bubblewrap).
"""
