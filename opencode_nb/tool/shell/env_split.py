"""How `env -S` cuts its text into words: its own rules, not the shell's.

`env -S 'rm\\_x'` runs `rm x`: `\\_` separates words, `\\c` ends the text, `#` starts a comment, `${NAME}` is
replaced from the environment, and single and double quotes group as in the shell but with fewer escapes. The
command a rule must see is the one env will run, so the words are cut here as GNU env cuts them.
"""

from __future__ import annotations

_SPACE = " \t\n\r\v\f"
_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "'": "'", "#": "#", "$": "$",
            "\\": "\\"}


class SplitError(ValueError):
    """env refuses the text (an unknown escape, an open quote, `$NAME` without braces): nothing runs."""


def split_string(text: str) -> list[str] | None:
    """The words `env -S text` passes on; None when a `${NAME}` makes them known only when the line runs.

    Raises:
        SplitError: when env would refuse the text.
    """
    out: list[str] = []
    word: str | None = None
    quote = ""
    i = 0
    while i < len(text):
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = ""
            elif char == "\\" and text[i + 1:i + 2] in ("\\", "'"):
                word = (word or "") + text[i + 1]
                i += 1
            else:
                word = (word or "") + char
        elif char == "\\":
            escape = text[i + 1:i + 2]
            i += 1
            if escape == "c" and not quote:
                break
            if escape == "_":
                if quote:
                    word = (word or "") + " "
                elif word is not None:
                    out.append(word)
                    word = None
            elif escape in _ESCAPES:
                word = (word or "") + _ESCAPES[escape]
            else:
                raise SplitError(f"`env -S` does not know the escape `\\{escape}`")
        elif char == "$":
            if text[i + 1:i + 2] != "{":
                raise SplitError("`env -S` takes variables only as `${NAME}`")
            return None
        elif quote == '"':
            if char == '"':
                quote = ""
            else:
                word = (word or "") + char
        elif char in "'\"":
            quote = char
            word = word or ""
        elif char in _SPACE:
            if word is not None:
                out.append(word)
                word = None
        elif char == "#" and word is None:
            break
        else:
            word = (word or "") + char
        i += 1
    if quote:
        raise SplitError("`env -S` text has an unterminated quote")
    if word is not None:
        out.append(word)
    return out
