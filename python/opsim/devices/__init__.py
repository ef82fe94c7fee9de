"""Block devices and the tools that describe them, one module per concept:

* :mod:`.guard` -- the read-only probe of a measurement target and the guard in front of every
  destructive action (mounted, in use, signatures);
* :mod:`.probe` -- collecting a drive's tool outputs (or recorded ones) into one description;
* the readers of each tool's output: :mod:`.lsblk`, :mod:`.hdparm`, :mod:`.nvme` (nvme-cli
  ``id-ctrl``/``id-ns``), :mod:`.smartctl`, and :mod:`.jsondoc`, the tolerant JSON reader
  they share (``opsim plan`` and ``opsim smart`` read smartctl through the same one).
"""
