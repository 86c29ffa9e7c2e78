# A run-time hook that does nothing, mapped in ../rthooks.dat to the modules whose stock
# run-time hooks the program does without: PyInstaller takes the first hook directory that
# names a module, but only when it names a script for it (an empty list is passed over).
