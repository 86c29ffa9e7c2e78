"""The page shown when no study is open: the demo study, open, new, import, the user guide
and the recent studies."""

from meaningbench.ui.welcome.page import WelcomePage

__all__ = ["WelcomePage"]
