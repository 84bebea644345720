"""Reading a program's options the way the program does, to find where the command it runs begins.

`sudo -u bob rm x` runs `rm x`, but `sudo -u rm x` runs `x` as user rm: which words are options, and which
options take a value, decides what a wrapper or an interpreter will run. Each program that matters gets an
`OptionSpec`; `scan` walks its words with it. An option word whose value is unknown (`$opt`) could be
anything, so the scan gives up (None) and the caller treats what follows as unknowable.

Programs reading their options with GNU getopt_long (`getopt_long=True`) accept any unambiguous prefix of a
long option (`timeout --sig KILL 5 rm x` is `--signal KILL`), so their spec lists every option they have and
the scan names each option it meets by its full name. An option such a spec does not list (a newer version's,
a misspelt one, an ambiguous prefix) might take the next word as its value: the scan reads it as a flag and
notes it in `Scan.doubtful`, and a caller that looks for the command after the options does not trust it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .words import Word, literal


@dataclass(frozen=True)
class OptionSpec:
    values: str = ""
    """Short options taking a value, attached (`-n5`) or as the next word (`-n 5`)."""
    attached: str = ""
    """Short options whose value, if any, is the rest of the same word (`-i.bak`, `-MPOSIX`)."""
    digits: str = ""
    """Short options taking an optional number in the same word (`-l`, `-l0`)."""
    long_values: frozenset[str] = frozenset()
    """Long options taking a value as the next word when not given as `--name=value`."""
    long_flags: frozenset[str] = frozenset()
    """Long options taking no value, or one only as `--name=value` (`env --block-signal[=SIG]`)."""
    flags: str = ""
    """Short options taking no value; with `getopt_long`, a letter in none of the short lists is doubtful."""
    getopt_long: bool = False
    """The lists are all the program's options and a long option may be any unambiguous prefix of one."""
    plus: bool = False
    """`+o name` and `+x` are options too (shells)."""
    dash_number: bool = False
    """`-10` is an option (`nice -10 cmd`)."""
    last: str = ""
    """Short options after whose value no more options are read (`python -m mod --flag`: `--flag` is mod's)."""


@dataclass(frozen=True)
class Option:
    name: str
    """`-c`, `--exec`; one per letter of a combined `-abc`."""
    value: Word | None = None


@dataclass
class Scan:
    options: list[Option] = field(default_factory=list)
    operand: int = 0
    """Index of the first word that is not an option (len(words) when there is none)."""
    doubtful: list[int] = field(default_factory=list)
    """Indexes of option words the spec does not know: each may have taken the word after it as its value."""

    def has(self, *names: str) -> bool:
        return any(o.name in names for o in self.options)

    def value(self, *names: str) -> Word | None:
        """The value of the last of these options given, if any."""
        found = [o for o in self.options if o.name in names]
        return found[-1].value if found else None


def scan(words: list[Word], start: int, spec: OptionSpec) -> Scan | None:
    """Options from `words[start]` up to the first operand or `--`; None if an option word is unknown."""
    result = Scan()
    i = start
    while i < len(words):
        value = words[i].value
        if value is None:
            return None if _could_be_option(words[i]) else _at(result, i)
        if value == "--":
            return _at(result, i + 1)
        if value.startswith("--") and len(value) > 2:
            name, eq, attached = value.partition("=")
            if spec.getopt_long:
                full = long_name(name, spec)
                if full is None:
                    result.doubtful.append(i)
                else:
                    name = full
            if eq:
                result.options.append(Option(name, literal(attached)))
            elif name in spec.long_values:
                if i + 1 >= len(words):
                    result.options.append(Option(name))
                else:
                    result.options.append(Option(name, words[i + 1]))
                    i += 1
            else:
                result.options.append(Option(name))
            i += 1
            continue
        if (value.startswith("-") or (spec.plus and value.startswith("+"))) and len(value) > 1:
            if spec.dash_number and value[1:].isdigit():
                result.options.append(Option(value))
                i += 1
                continue
            i = _short(words, i, value, spec, result)
            if spec.last and result.options and result.options[-1].name[1:] in spec.last:
                return _at(result, i)
            continue
        return _at(result, i)
    return _at(result, i)


def _short(words: list[Word], i: int, value: str, spec: OptionSpec, result: Scan) -> int:
    sign = value[0]
    j = 1
    while j < len(value):
        letter = value[j]
        name = sign + letter
        rest = value[j + 1:]
        if letter in spec.values:
            if rest:
                result.options.append(Option(name, literal(rest)))
                return i + 1
            if i + 1 < len(words):
                result.options.append(Option(name, words[i + 1]))
                return i + 2
            result.options.append(Option(name))
            return i + 1
        if letter in spec.attached:
            result.options.append(Option(name, literal(rest) if rest else None))
            return i + 1
        if letter in spec.digits:
            digits = len(rest) - len(rest.lstrip("0123456789"))
            result.options.append(Option(name, literal(rest[:digits]) if digits else None))
            j += 1 + digits
            continue
        if spec.getopt_long and letter not in spec.flags and i not in result.doubtful:
            result.doubtful.append(i)
        result.options.append(Option(name))
        j += 1
    return i + 1


def long_name(name: str, spec: OptionSpec) -> str | None:
    """The option a GNU program reads `--name` as: itself, or the one option it is a prefix of; None when the
    spec lists no such option or several (the program refuses an ambiguous prefix, or knows one we do not)."""
    known = spec.long_values | spec.long_flags
    if name in known:
        return name
    matches = [option for option in known if option.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def _could_be_option(word: Word) -> bool:
    """An unknown word may expand to an option unless it visibly starts with something else."""
    return not word.text or word.text[0] in "-+$`\"'\\{"


def _at(result: Scan, index: int) -> Scan:
    result.operand = index
    return result
