"""The installed version of the package behind a module, whatever the distribution is called."""

from __future__ import annotations

from importlib.metadata import version

from opencode_nb.kernel.fix.versions import installed


async def test_a_package_installed_under_its_import_name_gives_its_version():
    assert await installed("pydantic.fields") == (f"pydantic {version('pydantic')} is installed (the distribution "
                                                  "of module pydantic)")


async def test_a_module_whose_distribution_has_another_name_is_found_through_the_distributions():
    assert await installed("yaml") == f"PyYAML {version('PyYAML')} installed (the distribution of module yaml)"
    assert await installed("dateutil.parser") == (f"python-dateutil {version('python-dateutil')} installed (the "
                                                  "distribution of module dateutil)")


async def test_a_module_nothing_provides_is_said_to_be_missing_or_part_of_python():
    assert await installed("surely_not_a_module_xyz") == ("module surely_not_a_module_xyz: no installed distribution "
                                                          "provides it (not installed)")
    assert "standard library" in await installed("json.decoder")
