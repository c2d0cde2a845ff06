"""Which product and vendor a server fronts, named the way its users name them.

Sources, in order: a small table of names users know by another name (``gcloud`` -> Google
Cloud CLI, ``ms365`` -> Microsoft 365), the serverInfo title and name, the server name, the
package name, the websiteUrl, and the prefix most tool names share (``jira_``, ``ha_``). Each
word is then cased as the server's own texts case it (``github`` -> GitHub, ``dynamodb`` ->
DynamoDB). The vendor is named only where it is known to differ from the product (Google for
Google Maps, Microsoft for Azure); a package scope names who packaged the server, which is kept
as an alias, not as the vendor.

Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlparse

from cartograph.generate.bootstrap.lexicon import NOT_PRODUCT
from cartograph.generate.bootstrap.phrasing import base_verb
from cartograph.generate.text import split_identifier
from cartograph.upstream.snapshot import ServerSnapshot

_NAME_PART = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:\.[a-z]{2,4}\b)?|[0-9]+[A-Za-z]*|[^\W\d_A-Za-z]+")


@dataclass(frozen=True)
class KnownProduct:
    display: str
    vendor: str | None = None
    aliases: tuple[str, ...] = ()


# name (server, package, prefix or product word) -> how users know it
KNOWN: dict[str, KnownProduct] = {
    "gcloud": KnownProduct("Google Cloud CLI", "Google", ("gcloud", "Google Cloud", "GCP")),
    "gcp": KnownProduct("Google Cloud", "Google", ("GCP",)),
    "gdrive": KnownProduct("Google Drive", "Google", ("gdrive", "Drive")),
    "ms365": KnownProduct(
        "Microsoft 365",
        "Microsoft",
        ("Outlook", "OneDrive", "Teams", "OneNote", "Planner", "SharePoint", "Microsoft Graph"),
    ),
    "m365": KnownProduct("Microsoft 365", "Microsoft", ("Outlook", "OneDrive", "Teams")),
    "o365": KnownProduct("Microsoft 365", "Microsoft", ("Outlook", "OneDrive", "Teams")),
    "k8s": KnownProduct("Kubernetes", None, ("k8s", "kubectl")),
    "kubectl": KnownProduct("Kubernetes", None, ("kubectl", "k8s")),
    "ha": KnownProduct("Home Assistant", None, ("HA",)),
    "pg": KnownProduct("PostgreSQL", None, ("Postgres",)),
    "postgres": KnownProduct("PostgreSQL", None, ("Postgres",)),
    "ddg": KnownProduct("DuckDuckGo", None, ("DDG",)),
    "dbt": KnownProduct("dbt", "dbt Labs", ("data build tool",)),
    "gh": KnownProduct("GitHub", None, ("gh",)),
    "osm": KnownProduct("OpenStreetMap", None, ("OSM",)),
    "lol": KnownProduct("League of Legends", "Riot Games", ("LoL",)),
    "awslabs": KnownProduct("AWS", "Amazon Web Services", ("Amazon",)),
}

# a product word -> its vendor, where the two differ
VENDORS: dict[str, str] = {
    "google": "Google",
    "gmail": "Google",
    "chrome": "Google",
    "youtube": "Google",
    "azure": "Microsoft",
    "excel": "Microsoft",
    "word": "Microsoft",
    "powerpoint": "Microsoft",
    "outlook": "Microsoft",
    "teams": "Microsoft",
    "onedrive": "Microsoft",
    "aws": "Amazon Web Services",
    "dynamodb": "Amazon Web Services",
    "jira": "Atlassian",
    "confluence": "Atlassian",
    "bitbucket": "Atlassian",
    "playwright": "Microsoft",
    "puppeteer": "Google",
    "claude": "Anthropic",
}

# display words that name Microsoft Office products when they stand alone
_OFFICE = {
    "excel": "Microsoft Excel",
    "word": "Microsoft Word",
    "powerpoint": "Microsoft PowerPoint",
}


@dataclass(frozen=True)
class Product:
    """How users name the server: display words (cased as published) and match words."""

    display: str
    words: tuple[str, ...]
    vendor: str | None = None
    aliases: tuple[str, ...] = ()
    generic: bool = False
    """The product's name is a common word its own texts use in lower case ("time",
    "memory"): a task says "get the time", not "get the time in Time"."""

    @property
    def named(self) -> str:
        """The display name with its vendor, once: "Google Maps", "Azure (Microsoft)"."""
        if self.vendor and self.vendor.split()[0].lower() not in self.display.lower():
            return f"{self.display} ({self.vendor})"
        return self.display

    def keywords(self) -> list[str]:
        """Every name of the product and its vendor, lower-cased, for the lexical channel."""
        names = [self.display, *(self.aliases), *([self.vendor] if self.vendor else [])]
        out: list[str] = []
        for name in names:
            low = name.lower()
            if low and low not in out:
                out.append(low)
        return out


def product_of(server: ServerSnapshot) -> Product:
    """The product and vendor ``server`` fronts (see the module doc)."""
    texts = _texts(server)
    info = server.server_info or {}
    package = (server.package or "").rpartition("/")
    scope = package[0].lstrip("@")
    prefix = _tool_prefix(server)
    known = _known(server, package[2], prefix)
    display_words: list[str] = []
    for source in (server.name, str(info.get("title") or ""), _info_name(info), package[2]):
        head = _HEAD_END.split(source, maxsplit=1)[0]
        parts = _NAME_PART.findall(head) or _NAME_PART.findall(source)
        if all(p.lower() in NOT_PRODUCT for p in parts):
            parts = _NAME_PART.findall(source)
        for n, part in enumerate(parts):
            low = part.lower()
            if low in NOT_PRODUCT or low in _PACKAGING or (n and low == scope.lower()):
                continue  # a scope after the first word names who packaged it
            if low not in {w.lower() for w in display_words} and len(display_words) < 4:
                display_words.append(_cased(part, texts))
        if display_words:
            break
    if not display_words:
        display_words = [_cased(server.name, texts)]
    display = " ".join(display_words)
    aliases: list[str] = []
    vendor = None
    if known is not None:
        aliases += [display, *known.aliases]
        display, vendor = known.display, known.vendor
    elif len(display_words) == 1 and display_words[0].lower() in _OFFICE:
        aliases.append(display)
        display = _OFFICE[display_words[0].lower()]
    if vendor is None:
        vendor = next((VENDORS[w] for w in map(str.lower, display.split()) if w in VENDORS), None)
    if prefix and prefix not in display.lower():
        aliases.append(prefix)
    site = _site_name(str(info.get("websiteUrl") or ""))
    if site and site.lower() not in display.lower():
        aliases.append(site)
    if scope and scope.lower() not in NOT_PRODUCT:
        aliases.append(scope)
    words = tuple(dict.fromkeys(w.lower() for w in display_words + display.split()))
    aliases = [a for a in dict.fromkeys(aliases) if a and a.lower() != display.lower()]
    generic = all(_lower_use(w, texts) for w in display.split())
    return Product(display, words, vendor, tuple(aliases), generic)


_HEAD_END = re.compile(r"\s*(?::|\s[-–—|]\s|\(|\bby\b)\s*")
_PACKAGING = frozenset({"example", "examples", "fastmcp", "awslabs", "secure", "reference", "labs"})


def _info_name(info: dict[str, object]) -> str:
    """serverInfo's name without a path or dotted vendor prefix ("awslabs.x", "a/b")."""
    name = str(info.get("name") or "").rpartition("/")[2]
    return name.rpartition(".")[2] if re.match(r"^[a-z]+\.[a-z]", name) else name


def _texts(server: ServerSnapshot) -> str:
    info = server.server_info or {}
    parts = [server.instructions or "", str(info.get("description") or "")]
    parts += [str(info.get("title") or ""), str(info.get("name") or "")]
    parts += [str(t.get("description") or "") for t in server.tools]
    return "\n".join(parts)


def _known(server: ServerSnapshot, package: str, prefix: str) -> KnownProduct | None:
    for name in (server.name, package, prefix, *split_identifier(server.name)[:1]):
        found = KNOWN.get(name.lower()) if name else None
        if found is not None:
            return found
    return None


def _tool_prefix(server: ServerSnapshot) -> str:
    """The first name word that at least 40% of the tools share, when it is not a verb."""
    firsts = Counter(
        (split_identifier(str(t["name"])) or [""])[0] for t in server.tools if t.get("name")
    )
    if not firsts or len(server.tools) < 3:
        return ""
    word, count = firsts.most_common(1)[0]
    if count < 0.4 * len(server.tools) or base_verb(word) or len(word) < 2:
        return ""
    return word


def _site_name(url: str) -> str:
    host = urlparse(url).hostname or ""
    parts = [p for p in host.split(".") if p not in ("www", "mcp", "api", "app")]
    if len(parts) < 2 or parts[-2] in ("github", "gitlab"):
        return ""
    return parts[-2]


def _cased(part: str, texts: str) -> str:
    """``part`` as the server's texts write it (GitHub, DynamoDB), else capitalised."""
    forms = Counter(
        m.group(0) for m in re.finditer(rf"(?<![\w.]){re.escape(part)}(?![\w])", texts, re.I)
    )
    styled = [(n, f) for f, n in forms.items() if not f.islower() and not f.isupper()]
    if styled:
        return max(styled)[1]
    upper = forms.get(part.upper(), 0)
    if upper and upper >= forms.get(part.lower(), 0) and len(part) <= 5:
        return part.upper()
    if part.islower() and part.isascii():
        return part.upper() if len(part) <= 3 and part.isalpha() else part.capitalize()
    return part


def _lower_use(word: str, texts: str) -> bool:
    """Whether the texts use ``word`` in lower case mid-sentence more than capitalised."""
    low = len(re.findall(rf"(?<=[a-z,] ){re.escape(word.lower())}\b", texts))
    cap = len(re.findall(rf"(?<=[a-z,] ){re.escape(word[:1].upper() + word[1:])}\b", texts))
    return low > 0 and low >= cap
