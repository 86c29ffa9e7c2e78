"""MACE recovers who is competent among simulated Likert raters with known competences."""

from __future__ import annotations

import numpy as np

from meaningbench.analysis.mace import mace


def test_mace_recovers_simulated_competences_and_true_labels() -> None:
    rng = np.random.default_rng(3)
    n_items, n_labels = 400, 5
    truth = rng.integers(0, n_labels, n_items)
    competence = np.array([0.9, 0.8, 0.7, 0.15, 0.05])
    items, raters, labels = [], [], []
    for j, theta in enumerate(competence):
        # Spammers favour one label, as a straight-liner does.
        spam = np.full(n_labels, 0.05)
        spam[j % n_labels] = 0.8
        for i in range(n_items):
            knows = rng.random() < theta
            items.append(i)
            raters.append(j)
            labels.append(truth[i] if knows else rng.choice(n_labels, p=spam / spam.sum()))
    result = mace(np.array(items), np.array(raters), np.array(labels), n_items, 5, n_labels)
    assert np.argsort(-result.competence).tolist() == [0, 1, 2, 3, 4]
    assert np.abs(result.competence - competence).max() < 0.1
    assert (result.posterior.argmax(axis=1) == truth).mean() > 0.95
    # Majority vote does worse than the model on the same labels.
    votes = np.zeros((n_items, n_labels))
    np.add.at(votes, (np.array(items), np.array(labels)), 1)
    assert (votes.argmax(axis=1) == truth).mean() < (
        result.posterior.argmax(axis=1) == truth
    ).mean()


def test_a_likert_study_weights_raters_by_mace_competence(tmp_path) -> None:
    import random

    from meaningbench.analysis.rater_checks import study_rater_checks
    from meaningbench.annotation.protocols import set_protocol
    from meaningbench.annotation.session import AnnotationSession
    from meaningbench.annotation.settings import load_settings, save_settings
    from meaningbench.db.study import create_study
    from tests.annotation.factories import add_items

    st = create_study(tmp_path / "likert.mbstudy")
    try:
        add_items(st, 30, 2)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 5, False
            save_settings(s, cfg)
        set_protocol(st, "likert")
        truth = {}
        for name, knows in (("ann", 0.9), ("bo", 0.85), ("cy", 0.8), ("guess", 0.0)):
            rng = random.Random(name)
            sess = AnnotationSession(st, name)
            while (item := sess.next_item()) is not None:
                true = truth.setdefault(item.item_id, 1 + item.item_id * 7 % 5)
                value = true if rng.random() < knows else rng.randint(1, 5)
                sess.submit(item.item_id, {"meaning": float(value)})
        weights = {c.rater: c.weight for c in study_rater_checks(st)}
    finally:
        st.close()
    assert max(weights, key=weights.__getitem__) in {"ann", "bo"}
    assert min(weights, key=weights.__getitem__) == "guess"
    assert weights["guess"] < 0.2 < 0.55 < min(weights["ann"], weights["bo"], weights["cy"])
