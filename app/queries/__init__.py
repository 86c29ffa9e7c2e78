"""What the app's screens ask of a study, answered as plain frames and dataclasses.

The Qt layer (`meaningbench.ui`) reads studies only through this package, so it needs no
SQLAlchemy and no knowledge of the schema; each module here holds the questions of one area.
"""
