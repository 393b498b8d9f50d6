"""The market settings of a catalog (catalog/market.yaml): which Olares manifest profile its charts use and, when
the market declares it, the icons it serves."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from generator.schema.common import MAX_ITEMS, Id, Source, Strict

# docs/profiles.md: olares-v2 = manifest 0.10.0 / apiVersion v2 (Olares >= 1.12.3), olares-v3 = 0.12.0 / v3 (>= 1.12.6).
ProfileName = Literal["olares-v2", "olares-v3"]
DEFAULT_PROFILE: ProfileName = "olares-v3"
# docs/forms.md: `single` = one user's app (the maintainer's market; his validator forbids shared apps), `shared` =
# Olares 1.12.7's Router-native shared app (options.shared, sharedEntrances, settings through olaresEnv, bounded by
# the fit)
FormName = Literal["single", "shared"]
DEFAULT_FORM: FormName = "single"
IconName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]


class Icons(Strict):
    """The icons a market serves: `base_url` + `<name><suffix>` for each name in `served`."""

    base_url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+/$")]
    suffix: Annotated[str, StringConstraints(pattern=r"^\.[a-z]{2,5}$")] = ".png"
    served: tuple[IconName, ...] = Field(min_length=1)
    source: Annotated[str, StringConstraints(min_length=3)]

    def url(self, name: str) -> str:
        return f"{self.base_url}{name}{self.suffix}"

    def serves(self, url: str) -> bool:
        return url in {self.url(n) for n in self.served}


class Market(Strict):
    profile: ProfileName = DEFAULT_PROFILE
    form: FormName = DEFAULT_FORM  # the app form of every chart; an app may set its own `form:`
    icons: Icons | None = None
    # the market shows its own taxonomy (the maintainer's worker: scripts/market-taxonomy.json @59296d35, which his
    # validate-manifests-v3.js requires for every chart): each app then names its `categories` (MKT004)
    categories: bool = False
    # The devices the store's charts target (catalog/devices ids). Empty: the store's own device only, each app's
    # `device:`. An app's further `devices:` yield accelerator entries only for devices listed here (docs/devices.md
    # "Charts": the maintainer's validator accepts exactly one accelerator entry; a store for several devices opts in).
    devices: Annotated[tuple[Id, ...], Field(max_length=MAX_ITEMS)] = ()
    sources: tuple[Source, ...] = ()

    def targets(self, device: str, own: str) -> bool:
        """Whether the store's charts carry an accelerator entry for `device` of an app whose own device is `own`."""
        return device == own or device in self.devices

    @model_validator(mode="after")
    def _unique_icons(self) -> "Market":
        if self.icons is not None and len(set(self.icons.served)) != len(self.icons.served):
            raise ValueError("icons.served lists a name twice")
        if len(set(self.devices)) != len(self.devices):
            raise ValueError("devices lists a device twice")
        return self


__all__ = ["DEFAULT_FORM", "DEFAULT_PROFILE", "FormName", "Icons", "Market", "ProfileName"]
