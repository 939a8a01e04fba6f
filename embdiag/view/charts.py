"""Altair charts that render offline in notebooks and in the built book.

:func:`enable` registers and activates the ``embdiag`` renderer. It emits a plain
``text/html`` output: a ``<div>`` and a script that calls ``vegaEmbed`` on the chart's
spec. The libraries themselves (Vega, Vega-Lite, vega-embed, with its tooltip plugin) are
not fetched from a CDN: the book's Sphinx extension (:mod:`embdiag.paper.sphinxext`) serves the
bundle that ``vl-convert-python`` ships, which matches the installed Altair. Every float of
the spec is rounded to :data:`SIGNIFICANT` significant digits (the last bits of a float, which
another float path may change, are not part of a chart), and the div id is a hash of the
spec, so re-executing a chapter produces identical output.
"""

from __future__ import annotations

import hashlib
import json
import math

import altair as alt

from . import theme

#: vega-embed options: SVG output and export actions only (the online editor link needs a network).
EMBED_OPTIONS = {"renderer": "svg", "actions": {"export": True, "source": False, "compiled": False, "editor": False}}

_HTML = """<div id="{div}" class="embdiag-chart" data-chart="{div}"></div>
<script type="text/javascript">
(function () {{
  var spec = {spec};
  var target = document.getElementById("{div}");
  function draw() {{
    if (typeof window.vegaEmbed !== "function") {{
      target.setAttribute("data-error", "vegaEmbed is not loaded (offline bundle missing)");
      return;
    }}
    window.vegaEmbed(target, spec, {opts}).then(function (result) {{
      target.vegaView = result.view;
      target.setAttribute("data-rendered", "true");
    }}).catch(function (err) {{
      target.setAttribute("data-error", String(err));
      console.error(err);
    }});
  }}
  if (document.readyState === "loading") {{ document.addEventListener("DOMContentLoaded", draw); }} else {{ draw(); }}
}})();
</script>"""


#: Significant digits of every float in a chart's spec (data, scales, thresholds).
SIGNIFICANT = 6


def rounded(value, digits: int = SIGNIFICANT):
    """``value`` (a JSON-like tree) with every finite float rounded to ``digits`` significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    return value


def _named_in_order(spec: dict) -> dict:
    """``spec`` with its top-level datasets renamed ``data-1``, ``data-2``, ... in Altair's order
    (Altair names them by a hash of their unrounded values, which another float path changes)
    and every reference to them renamed alike."""
    datasets = spec.get("datasets")
    if not isinstance(datasets, dict):
        return spec
    names = {old: f"data-{i}" for i, old in enumerate(datasets, start=1)}

    def rename(node):
        if isinstance(node, dict):
            return {k: (names.get(v, v) if k == "name" and isinstance(v, str) else rename(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node

    out = rename({k: v for k, v in spec.items() if k != "datasets"})
    out["datasets"] = {names[old]: values for old, values in datasets.items()}
    return out


def chart_html(spec: dict) -> str:
    """HTML that draws the Vega-Lite ``spec`` (floats :func:`rounded`, datasets named in order)
    with the page's offline vegaEmbed."""
    text = json.dumps(_named_in_order(rounded(spec)), sort_keys=True, separators=(",", ":"))
    div = "vega-" + hashlib.sha1(text.encode()).hexdigest()[:12]
    return _HTML.format(div=div, spec=text, opts=json.dumps(EMBED_OPTIONS))


def _renderer(spec: dict, **_) -> dict:
    return {"text/html": chart_html(spec), "text/plain": "<Altair chart>"}


def enable() -> None:
    """Activate the offline renderer and the book's chart theme (idempotent)."""
    theme.enable()
    alt.renderers.register("embdiag", _renderer)
    alt.renderers.enable("embdiag")
    alt.data_transformers.disable_max_rows()


def bundle_js() -> str:
    """The Vega + Vega-Lite + vega-embed JavaScript bundle for the installed Altair."""
    import vl_convert as vlc

    return vlc.javascript_bundle()
