"""Everything that imports PySide6 or pyqtgraph, and nothing else does."""
