"""opsim's version, in a module of its own so that any part of the package can name it
without importing the package's ``__init__`` (and whatever that pulls in).  It equals the
Rust crates' version (``opsim._core.__version__``); tests/commands/test_cli_options.py pins the two."""

__version__ = "0.1.0"
