"""Network maps on the web pages (issue 28, item 5): the SVG of a model to pick connection nodes on, the SVG of a
capacity demonstration's result, and the script that puts them into a page (:func:`install`, called by
:func:`capacitysim.service.web.install`).

Routes
------
``GET /ui/assets/map.js``
    :data:`MAP_JS`, the script of the maps (``text/javascript``, cacheable, no sign-in: it holds no data).
``GET /ui/maps/model?model=NAME``
    The plan of a model (:func:`capacitysim.report.network_svg.model_svg`): a bundled model's name, or
    ``upload:<sha256>`` of the signed-in user's own upload. Another user's upload is answered as no upload (404,
    never its content), and the attempt is journaled (``read uploads``, outcome ``forbidden``).
``GET /ui/jobs/{job_id}/map.svg``
    The result map (:func:`capacitysim.report.network_svg.result_svg`) of a successful capacity demonstration
    the user may read (:func:`capacitysim.service.auth.may_read_job`, as the job page: another user's job is a
    403, journaled).

The SVGs are ``image/svg+xml`` with ``X-Content-Type-Options: nosniff`` and :data:`SVG_CSP` (nothing loads, no
script runs, when one is opened by itself); without a session, the routes send the browser to sign in, as the
pages do.

The script's markup contract (the page owns the markup; the script never writes HTML)::

    <div class="network-map" data-src="/ui/maps/model?model=synthetic-50"
         data-target="#connections" data-model-select="#model"></div>

* ``data-src``: the SVG to show (same origin); without it, the model map of the ``data-model-select`` element's
  value.
* ``data-target`` (optional): a CSS selector of a ``<textarea>`` (or text input); a click on a node appends a line
  ``NODE=`` to it (a line break first when it does not end with one), focuses it with the caret at the end, and
  marks the node (class ``sel``). Nodes named at the start of a line ``NODE=...`` of the textarea are marked as it
  is edited.
* ``data-model-select`` (optional): a CSS selector of a ``<select>`` (or input) of the model; its ``change``
  reloads the map from ``/ui/maps/model?model=`` + the encoded value.

The SVG is fetched with the session's cookie, parsed with ``DOMParser`` as ``image/svg+xml`` and imported as a
node (never ``innerHTML``); an answer that is not an SVG (a problem document, the sign-in page) shows its reason as
text in the box. The wheel zooms the map about the pointer, a drag pans it, a double-click resets it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from fastapi import Request
from fastapi.responses import Response

from capacitysim.service import auth
from capacitysim.service.processes import UPLOAD_REF, bundled
from capacitysim.service.web_jobs import JOB_ID

#: The Content-Security-Policy of the SVG answers: nothing to load, no script, inline CSS (the map's own
#: ``<style>``), never framed.
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
#: Model maps kept drawn, by file (path, size, modification time): a bundled model or an upload (whose bytes never
#: change: it is named by their SHA-256).
MODEL_MAP_CACHE = 32

MAP_JS = r"""/* capacitysim network maps (capacitysim.service.web_map): <div class="network-map" data-src="..."
   [data-target="#connections"] [data-model-select="#model"]>. No inline script: loaded as /ui/assets/map.js. */
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";

  function say(box, text) {
    var p = document.createElement("p");
    p.className = "network-map-message";
    p.textContent = text;
    box.replaceChildren(p);
  }

  function reason(r) {
    var type = r.headers.get("Content-Type") || "";
    if (type.indexOf("json") >= 0) {
      return r.json().then(function (p) { return (p && (p.detail || p.title)) || ("HTTP " + r.status); },
                           function () { return "HTTP " + r.status; });
    }
    if (r.redirected || type.indexOf("text/html") === 0) {
      return Promise.resolve("sign in again to see the map");
    }
    return Promise.resolve("HTTP " + r.status);
  }

  function targetOf(box) {
    var sel = box.getAttribute("data-target");
    return sel ? document.querySelector(sel) : null;
  }

  function listed(target) {
    var names = Object.create(null);
    target.value.split(/\r?\n/).forEach(function (line) {
      var i = line.indexOf("=");
      if (i > 0) { names[line.slice(0, i).trim()] = true; }
    });
    return names;
  }

  function markListed(box) {
    var target = targetOf(box), svg = box.querySelector("svg");
    if (!target || !svg) { return; }
    var names = listed(target);
    svg.querySelectorAll("[data-node]").forEach(function (el) {
      el.classList.toggle("sel", names[el.getAttribute("data-node")] === true);
    });
  }

  function pick(box, el) {
    var target = targetOf(box);
    if (!target) { return; }
    var v = target.value;
    if (v.length && !/\n$/.test(v)) { v += "\n"; }
    v += el.getAttribute("data-node") + "=";
    target.value = v;
    target.focus();
    target.setSelectionRange(v.length, v.length);
    el.classList.add("sel");
    target.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function zoomable(svg) {
    var vb = svg.viewBox.baseVal;
    if (!vb || !vb.width) { return; }
    var home = [vb.x, vb.y, vb.width, vb.height], drag = null;
    function point(ev) {
      var m = svg.getScreenCTM();
      if (!m) { return null; }
      var p = svg.createSVGPoint();
      p.x = ev.clientX; p.y = ev.clientY;
      return p.matrixTransform(m.inverse());
    }
    svg.addEventListener("wheel", function (ev) {
      var p = point(ev);
      if (!p) { return; }
      ev.preventDefault();
      var f = Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002)));
      var w = Math.max(home[2] / 50, Math.min(home[2] * 2, vb.width * f)), k = w / vb.width;
      vb.x = p.x - (p.x - vb.x) * k; vb.y = p.y - (p.y - vb.y) * k;
      vb.width = w; vb.height *= k;
    }, { passive: false });
    svg.addEventListener("pointerdown", function (ev) {
      if (ev.button === 0) { drag = { x: ev.clientX, y: ev.clientY, moved: false }; }
    });
    svg.addEventListener("pointermove", function (ev) {
      if (!drag) { return; }
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) { return; }
      drag.moved = true;
      var m = svg.getScreenCTM();
      if (!m) { return; }
      vb.x -= dx / m.a; vb.y -= dy / m.d;
      drag.x = ev.clientX; drag.y = ev.clientY;
    });
    svg.addEventListener("click", function (ev) {
      if (drag && drag.moved) { ev.stopImmediatePropagation(); ev.preventDefault(); }
      drag = null;
    }, true);
    svg.addEventListener("pointerup", function () { if (drag && !drag.moved) { drag = null; } });
    svg.addEventListener("pointerleave", function () { drag = null; });
    svg.addEventListener("dblclick", function () {
      vb.x = home[0]; vb.y = home[1]; vb.width = home[2]; vb.height = home[3];
    });
  }

  function load(box, src) {
    var seq = (box._mapSeq || 0) + 1;
    box._mapSeq = seq;
    box.setAttribute("aria-busy", "true");
    fetch(src, { credentials: "same-origin", headers: { "Accept": "image/svg+xml" } }).then(function (r) {
      var type = r.headers.get("Content-Type") || "";
      if (!r.ok || type.indexOf("image/svg+xml") !== 0) {
        return reason(r).then(function (why) { throw new Error(why); });
      }
      return r.text();
    }).then(function (text) {
      if (seq !== box._mapSeq) { return; }
      var doc = new DOMParser().parseFromString(text, "image/svg+xml");
      var root = doc.documentElement;
      if (!root || root.namespaceURI !== SVG_NS || root.localName !== "svg" ||
          doc.getElementsByTagNameNS("*", "parsererror").length) {
        throw new Error("the map could not be read");
      }
      root.querySelectorAll("script, foreignObject").forEach(function (el) { el.remove(); });
      var svg = document.importNode(root, true);
      box.replaceChildren(svg);
      zoomable(svg);
      markListed(box);
      box.dispatchEvent(new CustomEvent("network-map-loaded", { bubbles: true }));
    }).catch(function (err) {
      if (seq === box._mapSeq) { say(box, "No map: " + err.message); }
    }).finally(function () {
      if (seq === box._mapSeq) { box.removeAttribute("aria-busy"); }
    });
  }

  function modelSrc(value) {
    return "/ui/maps/model?model=" + encodeURIComponent(value);
  }

  function init(box) {
    if (box._mapInit) { return; }
    box._mapInit = true;
    box.addEventListener("click", function (ev) {
      var el = ev.target && ev.target.closest ? ev.target.closest("[data-node]") : null;
      if (el && box.contains(el)) { pick(box, el); }
    });
    var target = targetOf(box);
    if (target) { target.addEventListener("input", function () { markListed(box); }); }
    var selSel = box.getAttribute("data-model-select");
    var select = selSel ? document.querySelector(selSel) : null;
    if (select) {
      select.addEventListener("change", function () {
        if (select.value) { load(box, modelSrc(select.value)); }
      });
    }
    var src = box.getAttribute("data-src");
    if (src) { load(box, src); } else if (select && select.value) { load(box, modelSrc(select.value)); }
  }

  function start() { document.querySelectorAll("div.network-map").forEach(init); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
"""
#: The script's ETag (its SHA-256): a browser asks again with ``If-None-Match`` and gets a 304.
MAP_JS_ETAG = '"' + hashlib.sha256(MAP_JS.encode()).hexdigest()[:32] + '"'


@functools.lru_cache(maxsize=MODEL_MAP_CACHE)
def _model_svg(path: str, size: int, mtime_ns: int) -> str:
    from capacitysim.report.network_svg import model_svg

    return model_svg(Path(path))


def model_map_svg(path: Path) -> str:
    """The plan of the model at ``path`` (drawn once per file version: :data:`MODEL_MAP_CACHE`)."""
    st = path.stat()
    return _model_svg(str(path), st.st_size, st.st_mtime_ns)


def svg_response(svg: str) -> Response:
    """An SVG answer: ``image/svg+xml``, nosniff, :data:`SVG_CSP`, never stored (user data)."""
    return Response(svg.encode("utf-8"), media_type="image/svg+xml; charset=utf-8",
                    headers={"X-Content-Type-Options": "nosniff", "Content-Security-Policy": SVG_CSP,
                             "Cache-Control": "no-store", "X-Frame-Options": "DENY"})


def install(w) -> None:
    """Add the map routes to ``w.app`` (``w``: :class:`capacitysim.service.web.Web`)."""
    app, svc, ApiError, session, to_login = w.app, w.svc, w.ApiError, w.session, w.to_login

    @app.get("/ui/assets/map.js", include_in_schema=False)
    def map_js(request: Request):
        headers = {"Cache-Control": "public, max-age=3600", "ETag": MAP_JS_ETAG, "X-Content-Type-Options": "nosniff"}
        if MAP_JS_ETAG in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
            return Response(status_code=304, headers=headers)
        return Response(MAP_JS, media_type="text/javascript; charset=utf-8", headers=headers)

    def model_path(user, model: str) -> Path:
        """The file of ``model`` the user may read: a bundled model, or the user's own upload (another user's is
        no upload: 404, journaled)."""
        m = UPLOAD_REF.match(model)
        if m:
            sha = m.group(1)
            path = svc.uploads_of(user)(sha)
            if path is None:
                if svc.store.read("SELECT 1 FROM uploads WHERE sha256 = ? LIMIT 1", (sha,)):
                    svc.store.journal("read uploads", user, model, {"route": "/ui/maps/model"}, outcome="forbidden")
                raise ApiError(404, "Not found", f"no upload {sha[:12]}... of yours: upload the model first")
            return path
        names = bundled("model")
        if model in names:
            return names[model].resolve()
        raise ApiError(404, "Not found", f"no model {model[:100]!r}: a bundled model ({', '.join(names)}) or "
                       "\"upload:<sha256>\" of a model you uploaded")

    @app.get("/ui/maps/model", include_in_schema=False)
    def model_map(request: Request, model: str = ""):
        who = session(request)
        if who is None:
            return to_login(request)
        path = model_path(who.user, model)
        from capacitysim.errors import InputError

        try:
            svg = model_map_svg(path)
        except InputError as exc:
            raise ApiError(400, "Not a model", f"{model[:100]} is not a SWMM model that can be drawn: "
                           f"{str(exc)[:300]}") from None
        return svg_response(svg)

    @app.get("/ui/jobs/{job_id}/map.svg", include_in_schema=False)
    def job_map(job_id: str, request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        user = who.user
        job = svc.store.job(job_id) if JOB_ID.fullmatch(job_id) else None
        if job is None:
            raise ApiError(404, "Not found", f"no job {job_id[:100]!r}")
        if not auth.may_read_job(user, job):
            svc.store.journal("read jobs", user, job_id, {"route": "map"}, outcome="forbidden")
            raise ApiError(403, "Forbidden", "this job belongs to another user")
        if job["process"] != "capacity-demonstration":
            raise ApiError(404, "No map", f"job {job_id} is a {job['process']} job: maps are drawn of capacity "
                           "demonstrations")
        if job["status"] != "successful":
            raise ApiError(404, "Result not ready", f"job {job_id} is {job['status']}: no result to map")
        from capacitysim.report.network_svg import result_svg

        doc = json.loads(Path(job["result_path"]).read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise ApiError(404, "No map", f"job {job_id}'s result is no capacity demonstration document")
        return svg_response(result_svg(doc))
