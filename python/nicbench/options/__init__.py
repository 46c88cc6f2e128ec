"""One definition per model option: the CLI's options and the experiment targets' parameters come from it.

An `Option` names one input of a model once: its spec name (the target parameter), its kind and unit
(a `Param` kind), its default, its range or choices, its help, and its command-line flag. A target
takes its parameters from the table (`Option.param()`, under another name where a target has always
called it so: the install targets' `group` is the installer's `install_group`); the CLI builds its
click options from the same table (`nicbench.cli.options`). Both parse a value with the same
`Param.parse`, so a range, a choice list and the wording of an error exist once:

    spec:  FILE: key 'sweep.cores': expected an integer such as 16 from 1 to 1,024, found 0
    CLI:   nicbench: error: simulate: Invalid value for '--cores': expected an integer such as 16 from 1
           to 1,024, found '0'

What differs between the two is stated in the option: the CLI's default where it has its own
(`cli_default`, e.g. `--duration`: the trace's own span), and a converter for text forms only the
command line takes (`cli_text`, e.g. `--install-rate 100k/s`). The rules between options (an
installer's options need an installer, a queue map needs its cores) are each model's `check`, which
names options as the caller spells them (`spell`: the CLI's flags or the spec's names).

One module per model (`options/connectx.py`, ...), each with its table `OPTIONS` and the functions
that turn option values into the model's request; this package imports no CLI code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from nicbench.vocab.params import Param

__all__ = ["Option", "Options", "Spell", "SAME", "flag_spelling", "param_spelling"]


class _Same:
    """The default of `Option.cli_default`: the CLI uses the target's default."""

    def __repr__(self) -> str:
        return "SAME"


SAME: Any = _Same()

# How a message names an option: by its flag (`--cores`) on the command line, by its name (`cores`)
# in a spec.
Spell = Callable[[str], str]


@dataclass(frozen=True)
class Option:
    """One model input: what a spec key and a command-line flag have in common.

    `default` is the canonical value (a `Param` default: ns, bytes, bits/s). `flag`: the option on
    the command line (None: spec only). `cli_default`: the command line's default when it differs,
    as the user would type it (None: "not given", the command then decides). `cli_text`: turns
    command-line text into a value `Param.parse` takes. `cli_metavar`: the value's name in --help;
    `cli_note`: what --help adds for the command line (its own default, when it computes one);
    `cli_multiple`: the flag may be given several times (the command gets a tuple; without a
    `cli_default` it is required).
    `path`: the value names a file (the CLI refuses an empty one and completes file names).
    """

    name: str
    kind: str
    default: Any
    help: str
    flag: str | None = None
    cli_default: Any = SAME
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    none_word: str | None = None
    profile_kinds: tuple[str, ...] = ()
    profile_role: tuple[str, str] | None = None
    cli_text: Callable[[str], Any] | None = None
    cli_metavar: str | None = None
    cli_note: str = ""
    cli_multiple: bool = False
    path: bool = False
    extra: dict = field(default_factory=dict, compare=False)

    def param(
        self,
        name: str | None = None,
        *,
        default: Any = SAME,
        help: str | None = None,  # noqa: A002
        minimum: Any = SAME,
    ) -> Param:
        """The target parameter: this option's kind, range and help, optionally under another name or
        default (a target's default where it has always had its own)."""
        return Param(
            name or self.name,
            self.kind,
            self.default if default is SAME else default,
            self.help if help is None else help,
            choices=self.choices,
            minimum=self.minimum if minimum is SAME else minimum,
            maximum=self.maximum,
            none_word=self.none_word,
            profile_kinds=self.profile_kinds,
            profile_role=self.profile_role,
        )

    def parse(self, raw: Any, *, profile_check: bool = True) -> Any:
        """The canonical value of `raw` (a spec value, or command-line text): `UnitError` saying what
        is allowed. Command-line text goes through `cli_text` first. `profile_check=False`: a profile
        option's value is not read here (the model reads it, and says what is wrong)."""
        if self.cli_text is not None and isinstance(raw, str) and not (self.none_word and raw == self.none_word):
            raw = self.cli_text(raw)
        param = self.param()
        return (param if profile_check else replace(param, profile_kinds=())).parse(raw)

    def allowed(self) -> str:
        """The range or choices in words, for --help (`1 to 1,024`, `at least 1`); "" when any value
        of the kind goes."""
        if self.choices:
            return ""  # click lists them
        low, high = self.minimum, self.maximum
        unit = self.param().unit
        if unit == "ns" and low == 1:  # "positive": a duration says so itself
            low = None
        if unit == "ns":
            show = lambda x: f"{x / 1e9:g} s"  # noqa: E731
        else:
            show = lambda x: f"{x:,.0f}{unit}" if float(x).is_integer() else f"{x:g}{unit}"  # noqa: E731
        if low is not None and high is not None:
            return f"{show(low)} to {show(high)}"
        if low is not None:
            return f"at least {show(low)}"
        if high is not None:
            return f"at most {show(high)}"
        return ""

    def renamed(self, name: str, **changes: Any) -> Option:
        """The same option under another spec name (and other fields changed)."""
        return replace(self, name=name, **changes)


class Options:
    """An ordered table of options, looked up by name."""

    def __init__(self, options: Iterable[Option]):
        self._by_name: dict[str, Option] = {}
        for option in options:
            if option.name in self._by_name:
                raise ValueError(f"option {option.name!r} defined twice")
            self._by_name[option.name] = option

    def __getitem__(self, name: str) -> Option:
        return self._by_name[name]

    def __iter__(self) -> Iterator[Option]:
        return iter(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def params(self, *names: str) -> list[Param]:
        """The target parameters of these options, in this order."""
        return [self[name].param() for name in names]

    def flagged(self) -> list[Option]:
        """The options the command line has, in table order."""
        return [o for o in self if o.flag]

    def by_flag(self) -> dict[str, Option]:
        return {o.flag: o for o in self if o.flag}


def param_spelling(name: str) -> str:
    """A spec names an option by its parameter name."""
    return name


def flag_spelling(table: Options) -> Spell:
    """The command line names an option by its flag (an option without one by its name)."""
    return lambda name: table[name].flag if name in table and table[name].flag else name
