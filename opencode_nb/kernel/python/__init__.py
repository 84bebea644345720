"""Running the model's Python: in the person's namespace (`live`), or where it cannot touch their data, in a
confined copy-on-write fork of the kernel (`fork`) or a spawned worker given copies (`worker`, `copies`);
`gates` chooses, `supervise` watches the run from the kernel's side, `execute` gives IPython's semantics."""
