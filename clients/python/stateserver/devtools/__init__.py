"""Devtools: watch, inspect, rewind and replay a running stateserver core in the browser.

`python -m stateserver.devtools --attach PATH` attaches to a core started with `--listen PATH`;
`python -m stateserver.devtools -- stateserver ARGS...` starts one itself. Either way it serves
one page on 127.0.0.1 at a URL carrying an unguessable token, and is just another client of
the core: it reads promptly and asks for history at its own pace, so it never slows the core.
"""
from .link import CoreLink
from .web import make_app

__all__ = ["CoreLink", "make_app"]
