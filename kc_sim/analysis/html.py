"""HTML of the report: the style sheet, escaping, tables and lists (plain strings, no template engine)."""

from __future__ import annotations

import html

#: the report's style sheet
CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
code { background: #f5f5f5; padding: 0 0.25em; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #e3e3e3; }
figcaption { font-size: 0.88em; color: #555; }
.note { color: #555; font-size: 0.9em; }
"""



def esc(x) -> str:
    return html.escape(str(x))


def table_html(header: list[str], rows: list[list], left: int = 1) -> str:
    """An HTML table; the first ``left`` columns are left-aligned (names)."""
    def cell(tag, i, v):
        cls = ' class="l"' if i < left else ""
        return f"<{tag}{cls}>{esc(v)}</{tag}>"
    out = ["<table>", "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(header)) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)



def lines_html(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"
