// memstone Markdown renderer: GFM headings, emphasis, strikethrough, links, autolinks, images, lists (task
// lists too), tables, block quotes, code (fenced and indented), rules and line breaks.
//
// Safety by construction: the renderer builds DOM nodes with createElement and textContent only. It never
// assigns innerHTML or parses HTML, so raw HTML in a memory's body is shown as the text it is, and no script
// from a body can run. URLs pass an allow-list: links may be http(s), mailto or relative; images may be
// http(s) or relative. javascript:, data:, vbscript:, file: and every other scheme are dropped (the text
// stays, marked "unsafe link removed"). An image on another origin is not loaded: it becomes a link that opens
// it in a new tab on click, so reading a memory never tells a third party. The page's Content-Security-Policy
// (img-src 'self') is the second wall.

const LINK_SCHEMES = new Set(["http", "https", "mailto"]);
const IMAGE_SCHEMES = new Set(["http", "https"]);
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

export function safeUrl(raw, { image = false } = {}) {
  if (typeof raw !== "string") return null;
  // Browsers ignore ASCII whitespace and control characters inside a scheme ("java\tscript:"), so do we.
  const url = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  if (!url) return null;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    return (image ? IMAGE_SCHEMES : LINK_SCHEMES).has(name) ? raw.trim() : null;
  }
  if (url.startsWith("//")) return image ? raw.trim() : null; // protocol-relative: an image fetch at most
  return raw.trim(); // relative: /path, #anchor, ?query, path
}

// The host of an image URL on another origin, or null for a same-origin (relative) one.
export function externalOrigin(url) {
  let parsed;
  try {
    parsed = new URL(url, window.location.href);
  } catch {
    return url;
  }
  return parsed.origin === window.location.origin ? null : parsed.host || parsed.origin;
}

function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (m, body) => {
    if (body[0] === "#") {
      const code = body[1] === "x" || body[1] === "X" ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      if (!Number.isFinite(code) || code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\ufffd";
      return String.fromCodePoint(code);
    }
    return Object.prototype.hasOwnProperty.call(ENTITIES, body) ? ENTITIES[body] : m;
  });
}

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, v);
  if (children) for (const c of children) node.append(c);
  return node;
}

function text(value) {
  return document.createTextNode(value);
}

// ------------------------------------------------------------------------------------------------- inline
const ESCAPABLE = "\\`*_{}[]()#+-.!|~<>\"'$%&,/:;=?@^";

// The index of the last character of the escape or code span that starts at src[i], or i when none does:
// brackets and delimiters inside one are text.
function skipLiteral(src, i) {
  if (src[i] === "\\") return i + 1;
  if (src[i] === "`") {
    const run = /^`+/.exec(src.slice(i))[0];
    const close = src.indexOf(run, i + run.length);
    if (close > 0) return close + run.length - 1;
  }
  return i;
}

function findClosingBracket(src, start) {
  let depth = 0;
  for (let i = start; i < src.length; i++) {
    const skipped = skipLiteral(src, i);
    if (skipped !== i) { i = skipped; continue; }
    const c = src[i];
    if (c === "[") depth++;
    else if (c === "]") { if (depth === 0) return i; depth--; }
  }
  return -1;
}

function parseDestination(src, start) {
  // src[start] === "(" ; returns {url, title, end} or null
  let i = start + 1;
  while (src[i] === " ") i++;
  let url = "";
  if (src[i] === "<") {
    const close = src.indexOf(">", i);
    if (close < 0) return null;
    url = src.slice(i + 1, close);
    i = close + 1;
  } else {
    let depth = 0;
    while (i < src.length) {
      const c = src[i];
      if (c === "\\" && i + 1 < src.length) { url += src[i + 1]; i += 2; continue; }
      if (c === " " || c === "\n") break;
      if (c === "(") depth++;
      if (c === ")") { if (depth === 0) break; depth--; }
      url += c;
      i++;
    }
  }
  while (src[i] === " " || src[i] === "\n") i++;
  let title = null;
  const q = src[i];
  if (q === '"' || q === "'" || q === "(") {
    const closeChar = q === "(" ? ")" : q;
    const close = src.indexOf(closeChar, i + 1);
    if (close < 0) return null;
    title = src.slice(i + 1, close);
    i = close + 1;
    while (src[i] === " ") i++;
  }
  if (src[i] !== ")") return null;
  return { url: decodeEntities(url), title: title === null ? null : decodeEntities(title), end: i + 1 };
}

const DELIMS = ["**", "__", "~~", "*", "_"];

function canOpen(src, i, d) {
  const next = src[i + d.length];
  if (next === undefined || /\s/.test(next)) return false;
  if (d[0] === "_") {
    const prev = src[i - 1];
    if (prev !== undefined && /[\p{L}\p{N}]/u.test(prev)) return false; // intraword _ is not emphasis
  }
  return true;
}

function findCloser(src, from, d) {
  for (let j = from; j <= src.length - d.length; j++) {
    const skipped = skipLiteral(src, j);
    if (skipped !== j) { j = skipped; continue; }
    if (src.startsWith(d, j)) {
      if (d.length === 1 && src[j + 1] === d) { j++; continue; } // part of a double delimiter
      const prev = src[j - 1];
      if (prev === undefined || /\s/.test(prev)) continue;
      if (d[0] === "_") {
        const after = src[j + d.length];
        if (after !== undefined && /[\p{L}\p{N}]/u.test(after)) continue;
      }
      return j;
    }
  }
  return -1;
}

const BARE_URL = /^(https?:\/\/|www\.)[^\s<]*[^\s<.,:;"')\]!?*_~]/i;

function inline(src, depth = 0) {
  const out = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push(text(decodeEntities(buf)));
    buf = "";
  };
  if (depth > 20) return [text(src)];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") {
      const n = src[i + 1];
      if (n === "\n") { flush(); out.push(el("br")); i += 2; continue; }
      if (n !== undefined && ESCAPABLE.includes(n)) { buf += n; i += 2; continue; }
      buf += c; i++; continue;
    }
    if (c === "\n") {
      const hard = buf.endsWith("  ");
      buf = buf.replace(/ +$/, "");
      flush();
      out.push(hard ? el("br") : text("\n"));
      i++;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(src.slice(i))[0];
      const close = src.indexOf(run, i + run.length);
      if (close > 0 && src[close + run.length] !== "`") {
        flush();
        let code = src.slice(i + run.length, close).replace(/\n/g, " ");
        if (/^ .* $/.test(code) && code.trim()) code = code.slice(1, -1);
        out.push(el("code", null, [text(code)]));
        i = close + run.length;
        continue;
      }
      buf += run; i += run.length; continue;
    }
    if (c === "!" && src[i + 1] === "[") {
      const close = findClosingBracket(src, i + 2);
      if (close > 0 && src[close + 1] === "(") {
        const dest = parseDestination(src, close + 1);
        if (dest) {
          flush();
          const alt = decodeEntities(src.slice(i + 2, close).replace(/[\\*_`~]/g, ""));
          const url = safeUrl(dest.url, { image: true });
          const external = url ? externalOrigin(url) : null;
          if (external) {
            // Never fetched on render (the page's CSP allows only same-origin images): a click opens it.
            out.push(el("a", {
              class: "md-external-image", href: url, target: "_blank", rel: "noopener noreferrer nofollow",
              referrerpolicy: "no-referrer", title: `external image from ${external}: opens in a new tab`,
            }, [text(`[external image: ${alt || "untitled"} (${external})]`)]));
          } else if (url) {
            out.push(el("img", { src: url, alt, title: dest.title, loading: "lazy", referrerpolicy: "no-referrer" }));
          } else {
            out.push(el("span", { class: "md-unsafe", title: "unsafe image removed" }, [text(`[image: ${alt}]`)]));
          }
          i = dest.end;
          continue;
        }
      }
    }
    if (c === "[") {
      const close = findClosingBracket(src, i + 1);
      if (close > 0 && src[close + 1] === "(") {
        const dest = parseDestination(src, close + 1);
        if (dest) {
          flush();
          const label = inline(src.slice(i + 1, close), depth + 1);
          const url = safeUrl(dest.url);
          if (url) {
            const external = /^(https?:)?\/\//i.test(url);
            out.push(el("a", {
              href: url, title: dest.title,
              rel: external ? "noopener noreferrer nofollow" : null,
              target: external ? "_blank" : null,
            }, label));
          } else {
            out.push(el("span", { class: "md-unsafe", title: "unsafe link removed" }, label));
          }
          i = dest.end;
          continue;
        }
      }
    }
    if (c === "<") {
      const auto = /^<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)>/.exec(src.slice(i));
      if (auto) {
        flush();
        const url = safeUrl(auto[1]);
        out.push(url ? el("a", { href: url, rel: "noopener noreferrer nofollow", target: "_blank" }, [text(auto[1])])
                     : el("span", { class: "md-unsafe", title: "unsafe link removed" }, [text(auto[1])]));
        i += auto[0].length;
        continue;
      }
      const mail = /^<([^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>/.exec(src.slice(i));
      if (mail) {
        flush();
        out.push(el("a", { href: `mailto:${mail[1]}` }, [text(mail[1])]));
        i += mail[0].length;
        continue;
      }
      buf += c; i++; continue; // raw HTML stays text
    }
    if ((c === "h" || c === "H" || c === "w" || c === "W") && (i === 0 || /[\s(*_~]/.test(src[i - 1]))) {
      const m = BARE_URL.exec(src.slice(i));
      if (m) {
        flush();
        const shown = m[0];
        const href = /^www\./i.test(shown) ? `https://${shown}` : shown;
        out.push(el("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, [text(shown)]));
        i += shown.length;
        continue;
      }
    }
    const d = DELIMS.find((x) => src.startsWith(x, i));
    if (d && canOpen(src, i, d)) {
      const close = findCloser(src, i + d.length, d);
      if (close > i + d.length) {
        flush();
        const tag = d === "~~" ? "del" : d.length === 2 ? "strong" : "em";
        out.push(el(tag, null, inline(src.slice(i + d.length, close), depth + 1)));
        i = close + d.length;
        continue;
      }
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

// ------------------------------------------------------------------------------------------------- blocks
const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST = /^( {0,3})([-+*]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
const TABLE_DELIM = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && s[i + 1] === "|") { cur += "|"; i++; continue; }
    if (s[i] === "|") { cells.push(cur.trim()); cur = ""; continue; }
    cur += s[i];
  }
  cells.push(cur.trim());
  return cells;
}

function startsBlock(line) {
  return FENCE.test(line) || ATX.test(line) || HR.test(line) || QUOTE.test(line) || LIST.test(line);
}

function blocks(lines, depth = 0) {
  const out = [];
  let i = 0;
  if (depth > 12) return [el("p", null, [text(lines.join("\n"))])];
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[2];
      const indent = m[1].length;
      const info = m[3] || "";
      const body = [];
      i++;
      while (i < lines.length && !new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(lines[i])) {
        body.push(lines[i].replace(new RegExp(`^ {0,${indent}}`), ""));
        i++;
      }
      i++; // closing fence (or end)
      const code = el("code", info ? { class: `language-${info.replace(/[^\w+-]/g, "")}` } : null, [text(body.join("\n"))]);
      out.push(el("pre", null, [code]));
      continue;
    }
    if ((m = ATX.exec(line))) {
      out.push(el(`h${m[1].length}`, null, inline((m[2] || "").trim(), 0)));
      i++;
      continue;
    }
    if (HR.test(line)) { out.push(el("hr")); i++; continue; }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && lines[i].trim() && (QUOTE.test(lines[i]) || !startsBlock(lines[i]))) {
        inner.push(lines[i].replace(QUOTE, ""));
        i++;
      }
      out.push(el("blockquote", null, blocks(inner, depth + 1)));
      continue;
    }
    if ((m = LIST.exec(line)) && (m[3] !== undefined || m[4] === undefined)) {
      const ordered = /\d/.test(m[2]);
      const marker = ordered ? m[2].slice(-1) : m[2];
      const items = [];
      let loose = false;
      let gap = false; // a blank line after the previous item: loose only if this list goes on
      while (i < lines.length) {
        const lm = LIST.exec(lines[i]);
        if (!lm) break;
        const sameKind = ordered ? /\d/.test(lm[2]) && lm[2].slice(-1) === marker : lm[2] === marker;
        if (!sameKind || lm[1].length > m[1].length + 1) break;
        if (gap) loose = true;
        const pad = lm[1].length + lm[2].length + Math.min((lm[3] || " ").length, 4);
        const body = [lm[4] || ""];
        i++;
        let blankSeen = false;
        while (i < lines.length) {
          const next = lines[i];
          if (!next.trim()) { blankSeen = true; body.push(""); i++; continue; }
          const indent = next.length - next.trimStart().length;
          if (indent >= pad) {
            if (blankSeen) loose = true;
            body.push(next.slice(pad));
            blankSeen = false;
            i++;
            continue;
          }
          if (!blankSeen && !startsBlock(next)) { body.push(next.trimStart()); i++; continue; } // lazy line
          break;
        }
        while (body.length && !body[body.length - 1].trim()) body.pop();
        gap = blankSeen;
        items.push({ body, start: ordered ? parseInt(lm[2], 10) : null });
      }
      const list = el(ordered ? "ol" : "ul", ordered && items[0].start !== 1 ? { start: String(items[0].start) } : null);
      for (const item of items) {
        const li = el("li");
        const task = /^\[([ xX])\][ \t]+/.exec(item.body[0]);
        if (task) {
          item.body[0] = item.body[0].slice(task[0].length);
          const box = el("input", { type: "checkbox", disabled: "", "aria-label": "task" });
          if (task[1] !== " ") box.setAttribute("checked", "");
          li.classList.add("task");
          li.append(box, text(" "));
        }
        const content = blocks(item.body, depth + 1);
        if (!loose && content.length && content[0].tagName === "P") {
          li.append(...Array.from(content[0].childNodes));
          for (const rest of content.slice(1)) li.append(rest);
        } else {
          li.append(...content);
        }
        list.append(li);
      }
      out.push(list);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const head = splitRow(line);
      const aligns = splitRow(lines[i + 1]).map((c) =>
        c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : null);
      if (aligns.length === head.length) {
        i += 2;
        const cell = (tag, value, k) => el(tag, aligns[k] ? { class: `align-${aligns[k]}` } : null, inline(value ?? "", 0));
        const thead = el("thead", null, [el("tr", null, head.map((h, k) => cell("th", h, k)))]);
        const tbody = el("tbody");
        while (i < lines.length && lines[i].trim() && lines[i].includes("|") && !startsBlock(lines[i])) {
          const row = splitRow(lines[i]);
          tbody.append(el("tr", null, head.map((_, k) => cell("td", row[k], k))));
          i++;
        }
        out.push(el("div", { class: "table-wrap" }, [el("table", null, tbody.childNodes.length ? [thead, tbody] : [thead])]));
        continue;
      }
    }
    if (/^( {4}|\t)/.test(line)) {
      const body = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || !lines[i].trim())) {
        body.push(lines[i].replace(/^( {4}|\t)/, ""));
        i++;
      }
      while (body.length && !body[body.length - 1].trim()) body.pop();
      out.push(el("pre", null, [el("code", null, [text(body.join("\n"))])]));
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim()) {
      if (para.length && /^ {0,3}(=+|-+)[ \t]*$/.test(lines[i])) {
        const level = lines[i].trim()[0] === "=" ? 1 : 2;
        out.push(el(`h${level}`, null, inline(para.join("\n").trim(), 0)));
        para.length = 0;
        i++;
        break;
      }
      if (para.length && startsBlock(lines[i])) break;
      if (para.length && lines[i].includes("|") && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1])) break;
      para.push(lines[i].replace(/^ {1,3}/, ""));
      i++;
    }
    if (para.length) out.push(el("p", null, inline(para.join("\n").trim(), 0)));
  }
  return out;
}

/** Render Markdown source to a DocumentFragment of safe DOM nodes. */
export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = String(source ?? "").replace(/\r\n?/g, "\n").replace(/\t/g, "    ").split("\n");
  fragment.append(...blocks(lines));
  return fragment;
}
