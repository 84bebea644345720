"""What tools share beyond shell and files: describing values (`describe/`), plan files as steps (`plandoc`),
notebooks as the model reads them (`ipynb`), and streaming a running tool's output (`stream`); no tool lives
here."""
