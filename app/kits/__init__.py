"""Rater kits: a study file per rater out, their ratings back in, and the campaign's figures.

A kit is a study file holding one rater's queue and nothing else a rater should not see
(see `making`); `collecting` brings returned kits back through the merge; `campaign`
gives the lead's figures. The lead's study keeps the record of each kit (`record`).
"""
