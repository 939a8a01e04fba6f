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

#: Loaded after the bundle (:func:`bundle_js`): wraps ``window.vegaEmbed`` so that a chart wider than
#: its room is re-laid before it is drawn (side-by-side views stacked, facets and concatenations in one
#: column, panels capped at the room less their axes, legends below, long titles wrapped) and narrowed
#: until it fits; a chart that still does not fit scrolls at full size inside its own box. It draws a
#: chart again when its room changes. ``window.embdiagCharts`` exposes the pure spec transforms.
RELAYOUT_JS = r"""(function () {
  "use strict";
  var embed = window.vegaEmbed;
  if (typeof embed !== "function" || window.embdiagCharts) return;

  var ROOM = 100;  // px beside a panel for its axis labels and title
  var MIN_PANEL = 90;  // px: a panel is never narrowed below this
  var MIN_STEP = 8;  // px: a band is never narrowed below this
  var CHAR = 0.6;  // width of a character, in font sizes (titles are wrapped by this estimate)
  var PASSES = 4;  // narrowing passes after the re-lay, before a chart is left to scroll
  var VIEWS = ["mark", "layer"];

  function copy(x) { return JSON.parse(JSON.stringify(x)); }
  function isObject(x) { return x !== null && typeof x === "object" && !Array.isArray(x); }
  function isView(node) { return VIEWS.some(function (k) { return k in node; }); }

  function each(node, visit) {
    if (Array.isArray(node)) { node.forEach(function (v) { each(v, visit); }); return; }
    if (!isObject(node)) return;
    visit(node);
    Object.keys(node).forEach(function (k) {
      if (k !== "datasets" && k !== "data" && k !== "config") each(node[k], visit);
    });
  }

  function wrap(text, px, font) {
    var per = Math.max(8, Math.floor(px / (CHAR * font)));
    if (typeof text !== "string" || text.length <= per) return text;
    var lines = [], line = "";
    text.split(/\s+/).forEach(function (word) {
      if (line && (line + " " + word).length > per) { lines.push(line); line = word; }
      else line = line ? line + " " + word : word;
    });
    if (line) lines.push(line);
    return lines;
  }

  function wrapTitle(node, key, px, font) {
    var t = node[key];
    if (typeof t === "string" || Array.isArray(t)) node[key] = wrap([].concat(t).join(" "), px, font);
    else if (isObject(t) && (typeof t.text === "string" || Array.isArray(t.text))) {
      t.text = wrap([].concat(t.text).join(" "), px, t.fontSize || font);
    }
  }

  // A view's own title starts at its plot's left edge: it is wrapped at the plot's width; the
  // chart's title at the chart's.
  function wrapTitles(spec, width) {
    var font = (spec.config && spec.config.title && spec.config.title.fontSize) || 13;
    each(spec, function (node) {
      if (!("title" in node)) return;
      if (node === spec) wrapTitle(node, "title", width - 10, font);
      else if (isView(node) && typeof node.width === "number") {
        wrapTitle(node, "title", Math.max(node.width, 120), font);
      } else if (isView(node) || "vconcat" in node || "concat" in node || "facet" in node) {
        wrapTitle(node, "title", width - ROOM, font);
      }
    });
    return spec;
  }

  // Levels of a facet field whose order is given (0 if not known).
  function levels(def) { return isObject(def) && Array.isArray(def.sort) ? def.sort.length : 0; }

  // A row x column facet with its fields swapped (fewer panels side by side); the headers keep
  // their titles and formats, not the orientation set for the other side.
  function swapped(facet) {
    function plain(def) {
      var out = Object.assign({}, def);
      if (isObject(out.header)) {
        out.header = Object.assign({}, out.header);
        ["labelAngle", "labelOrient", "labelAlign", "labelAnchor", "labelBaseline", "titleOrient", "titleAngle"]
          .forEach(function (k) { delete out.header[k]; });
      }
      return out;
    }
    return Object.assign({}, facet, {row: plain(facet.column), column: plain(facet.row)});
  }

  function sideways(legend) { return !legend.orient || legend.orient === "right" || legend.orient === "left"; }

  // One column: side-by-side views stacked, wrapped facets and concatenations in one column,
  // every panel no wider than the room less ROOM, legends under their plot, long titles wrapped.
  function relay(spec, width) {
    var out = copy(spec);
    var panel = Math.max(MIN_PANEL, width - ROOM);
    var config = out.config = isObject(out.config) ? out.config : {};
    var axisFont = (config.axis && config.axis.titleFontSize) || 11;
    each(out, function (node) {
      if (Array.isArray(node.hconcat)) { node.vconcat = node.hconcat; delete node.hconcat; }
      if (Array.isArray(node.concat) || Array.isArray(node.repeat)) node.columns = 1;
      if (isObject(node.facet)) {
        if ("field" in node.facet || "columns" in node) node.columns = 1;
        else if (node.facet.column && !node.facet.row) { node.facet = node.facet.column; node.columns = 1; }
        else if (levels(node.facet.column) > levels(node.facet.row)) node.facet = swapped(node.facet);
      }
      if (isObject(node.repeat) && Array.isArray(node.repeat.column) && !node.repeat.row) {
        node.repeat = {row: node.repeat.column};
        each(node.spec, function (n) { if (n.repeat === "column") n.repeat = "row"; });
      }
      if (isObject(node.encoding)) {
        var enc = node.encoding;
        if (isObject(enc.column) && !enc.row) {
          enc.facet = Object.assign({}, enc.column, {columns: 1});
          delete enc.column;
        } else if (isObject(enc.facet)) enc.facet.columns = 1;
        Object.keys(enc).forEach(function (ch) {
          var def = enc[ch];
          if (isObject(def) && isObject(def.legend) && sideways(def.legend)) def.legend.orient = "bottom";
        });
        ["x", "x2"].forEach(function (ch) {
          if (!isObject(enc[ch])) return;
          wrapTitle(enc[ch], "title", panel, axisFont);
          if (isObject(enc[ch].axis)) wrapTitle(enc[ch].axis, "title", panel, axisFont);
        });
      }
      if (isView(node) && typeof node.width === "number") node.width = Math.max(MIN_PANEL, Math.min(node.width, panel));
    });
    if (typeof out.width === "number") out.width = Math.max(MIN_PANEL, Math.min(out.width, panel));
    wrapTitles(out, width);
    var view = config.view = isObject(config.view) ? config.view : {};
    view.continuousWidth = Math.min(view.continuousWidth || 300, panel);
    if (typeof view.width === "number") view.width = Math.min(view.width, panel);
    config.concat = Object.assign({}, config.concat, {columns: 1});
    config.facet = Object.assign({}, config.facet, {columns: 1});
    var legend = config.legend = isObject(config.legend) ? config.legend : {};
    if (sideways(legend)) {
      legend.orient = "bottom";
      if (!legend.direction) legend.direction = "vertical";
      legend.columns = Math.min(legend.columns || 2, width < 360 ? 1 : 2);
    }
    return out;
  }

  // ``spec`` with every panel narrowed by ``excess`` px (bands in proportion) and legends in one column.
  function narrow(spec, excess, drawn, width) {
    var out = copy(spec);
    var factor = Math.max(0.5, 1 - excess / Math.max(drawn, 1));
    each(out, function (node) {
      if (!isView(node) && node !== out) return;
      if (typeof node.width === "number") node.width = Math.max(MIN_PANEL, Math.round(node.width - excess - 6));
      else if (isObject(node.width) && typeof node.width.step === "number") {
        node.width.step = Math.max(MIN_STEP, Math.floor(node.width.step * factor));
      }
    });
    var config = out.config = isObject(out.config) ? out.config : {};
    var view = config.view = isObject(config.view) ? config.view : {};
    view.continuousWidth = Math.max(MIN_PANEL, Math.round((view.continuousWidth || 300) - excess));
    if (typeof view.step === "number") view.step = Math.max(MIN_STEP, Math.floor(view.step * factor));
    if (isObject(view.discreteWidth) && typeof view.discreteWidth.step === "number") {
      view.discreteWidth.step = Math.max(MIN_STEP, Math.floor(view.discreteWidth.step * factor));
    }
    if (isObject(config.legend)) {
      config.legend.columns = 1;
      config.legend.layout = {bottom: {direction: "vertical", anchor: "start"}};  // legends one under another
    }
    wrapTitles(out, width);
    each(out, function (node) {
      if (!isObject(node.encoding)) return;
      Object.keys(node.encoding).forEach(function (ch) {
        var def = node.encoding[ch];
        if (isObject(def) && isObject(def.legend) && def.legend.columns > 1) def.legend.columns = 1;
      });
    });
    return out;
  }

  function room(el) {
    var parent = el.parentElement;
    if (!parent) return 0;
    var p = getComputedStyle(parent), e = getComputedStyle(el);
    var inner = parent.clientWidth - parseFloat(p.paddingLeft) - parseFloat(p.paddingRight);
    return Math.floor(inner - parseFloat(e.paddingLeft) - parseFloat(e.paddingRight)
      - parseFloat(e.borderLeftWidth) - parseFloat(e.borderRightWidth));
  }

  function drawn(el) {
    var svg = el.querySelector("svg");
    return svg ? (svg.width && svg.width.baseVal.value) || svg.getBoundingClientRect().width : 0;
  }

  // Draw ``spec`` at full size; where it is wider than its room, re-lay it (relay) and narrow it
  // (narrow) until it fits; what still does not fit scrolls inside the chart's own box.
  function fit(el, spec, opts) {
    var state = el.embdiagChart = el.embdiagChart || {};
    var run = (state.run || 0) + 1;
    state.run = run;
    state.spec = spec;
    state.opts = opts;
    function draw(s) {
      if (state.result) { try { state.result.finalize(); } catch (err) { /* already gone */ } }
      return embed(el, s, opts).then(function (result) {
        state.result = result;
        el.vegaView = result.view;
        return result;
      });
    }
    var promise = draw(spec).then(function (result) {
      if (run !== state.run) return state.promise;  // a later fit took over: resolve with its chart
      var width = room(el);
      state.width = width;
      state.relaid = false;
      if (width <= 0 || drawn(el) <= width + 1) return result;
      state.relaid = true;
      var pass = 0;
      function step(s) {
        return draw(s).then(function (r) {
          if (run !== state.run) return state.promise;
          var excess = drawn(el) - width;
          if (excess <= 1 || pass >= PASSES) return r;
          pass += 1;
          return step(narrow(s, excess, drawn(el), width));
        });
      }
      return step(relay(spec, width));
    });
    state.promise = promise;
    return promise;
  }

  function watch(el) {
    if (el.embdiagWatched || typeof ResizeObserver !== "function" || !el.parentElement) return;
    el.embdiagWatched = true;
    var timer = null;
    new ResizeObserver(function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var state = el.embdiagChart, width = room(el);
        if (!state || state.width === undefined || width <= 0 || Math.abs(width - state.width) < 16) return;
        if (state.relaid || drawn(el) > width + 1 || !state.width) fit(el, state.spec, state.opts);
        else state.width = width;
      }, 200);
    }).observe(el.parentElement);
  }

  function vegaEmbed(el, spec, opts) {
    var target = typeof el === "string" ? document.querySelector(el) : el;
    if (!target || !isObject(spec) || typeof getComputedStyle !== "function") return embed(el, spec, opts);
    watch(target);
    return fit(target, spec, opts);
  }

  window.embdiagCharts = {relay: relay, narrow: narrow, wrap: wrap};
  window.vegaEmbed = vegaEmbed;
})();
"""


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
    """The Vega + Vega-Lite + vega-embed JavaScript bundle for the installed Altair, then :data:`RELAYOUT_JS`."""
    import vl_convert as vlc

    return vlc.javascript_bundle() + "\n" + RELAYOUT_JS
