"""Build glue pyproject.toml cannot express: the top-level catalog/ and templates/ ship inside the package.

They stay where the project keeps them (the repository's top level) and are mapped into the wheel as
`generator/_data/catalog` and `generator/_data/templates` (with templates/compiled/, the templates compiled ahead:
generator/chart/render.py), where `importlib.resources` finds them
(generator/core/locate.py). Every generator package is found, so a new stage package ships without an edit
here. Everything else (metadata, dependencies, the `catalog` script) is in pyproject.toml.
"""

from setuptools import find_packages, setup

DATA = {"generator._data.catalog": "catalog", "generator._data.templates": "templates",
        "generator._data.ci": ".ci"}  # only its llama-server build script (below): `catalog smoke --build-llama-server`

setup(
    packages=find_packages(include=["generator", "generator.*"]) + sorted(DATA),
    package_dir=DATA,
    # every file of both: the templates and the chat-template files shipped with charts
    package_data={"generator._data.catalog": ["**/*"], "generator._data.templates": ["**/*"],
                  "generator._data.ci": ["build-llama-server.sh"],
                  "generator.fit": ["speed_fitted.json"]},  # the speed model's fitted values (bench/speed/fit.py)
    # the templates compiled ahead ship as source (pip byte-compiles them at install, as it does the package's own)
    exclude_package_data={"generator._data.templates": ["compiled/__pycache__/*"]},
    include_package_data=False,
)
