"""Reports: self-contained HTML pages (figures embedded as PNG) built from workflow results."""
