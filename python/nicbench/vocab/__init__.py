"""The vocabulary the harness's layers share, at the bottom of them: imports no other part of the harness.

- `params`: `Param` and the parameter kinds a target, a backend or a design declares (and their
  canonical values);
- `records`: the fixed columns of the tidy records (what is no parameter);
- `study`: studies, their reference values and claims (`Study`, `Reference`, `Claim`, `load_study`);
- `errors`: `SpecError`, `UnknownTargetError`, `StoreError`.

The layers above, each importing only those below it (`python/tests/unit/test_import_layers.py`
holds the order; `docs/architecture.md` draws it): backends, experiments, calibrate and report,
reproduce, the CLI. Only the top-level modules (`nicbench.units`, `nicbench.profiles`, ...) are below.
"""
