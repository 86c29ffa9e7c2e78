"""The rating screen and its dialogs (the Qt side of `meaningbench.annotation`)."""
