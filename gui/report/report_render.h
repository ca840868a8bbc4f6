// Writing report documents (report_document.h): PDF through QPdfWriter (A4, DejaVu Sans,
// fonts embedded as subsets, vector charts, tables split across pages with their header
// repeated, the footer on every page), self-contained HTML (inline CSS, charts as inline SVG
// drawn by the same code through QSvgGenerator, no external resource), and CSV (RFC 4180: the
// document's main table to the path given, each other one beside it as STEM-NAME.csv).
//
// PDF and SVG need a QGuiApplication (fonts); `granary report` makes an offscreen one.
// Not thread-safe: from the GUI thread.
#pragma once

#include <QPainter>
#include <QRectF>
#include <string>
#include <vector>

#include "engine/status.h"
#include "gui/report/report_document.h"

namespace granary::report {

Status write_pdf(const Document& d, const std::string& path);
Status write_html(const Document& d, const std::string& path);
// Returns the files written, the main table's first.
Result<std::vector<std::string>> write_csv(const Document& d, const std::string& path);

// Draws `chart` in `area` (axes with ticks, series, a reference line, the legend).
void draw_chart(QPainter& p, const QRectF& area, const Chart& chart);

}  // namespace granary::report
