"""The study file: SQLAlchemy models, engine set-up, migrations and queries."""
