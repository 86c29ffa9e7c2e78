"""A real-window screenshot of the rating screen with a long German pair, diff highlighting on.

Run under a virtual display:
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_long_text
Writes resources/screenshots/rate-long-text.png: both texts scrolled a little way in, as a
rater sees them after Shift+Page Down. `tests.tools.screenshots_annotation` takes it too.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.study import Study, create_study
from tests.tools.screenshots_annotation import (
    OUT_DIR,
    add_pairs,
    light_palette,
    rating_window,
    screenshot_app,
)

# Written for this picture (no dataset text is copied into the project).
SOURCE = """Die Brücke über die Mulde, die das Dorf Lindenau seit dem späten Mittelalter mit der gegenüberliegenden Handelsstadt verband, galt über Jahrhunderte als eines der wichtigsten Bauwerke der gesamten Region. Sie wurde im Jahr 1412 zunächst aus Eichenholz errichtet und musste nach den verheerenden Hochwassern von 1501 und 1573 jeweils fast vollständig erneuert werden, was die Gemeinde jedes Mal an den Rand des Ruins brachte.

Erst im Jahr 1688 beschloss der Rat der Stadt, die hölzerne Konstruktion durch eine steinerne Bogenbrücke zu ersetzen. Die Bauarbeiten, die von einem aus Dresden berufenen Baumeister geleitet wurden, dauerten beinahe elf Jahre, weil das Geld immer wieder ausging und die Arbeiter in den Wintermonaten nicht am Fluss arbeiten konnten. Für die Finanzierung erhob die Stadt einen Brückenzoll, den jeder Händler entrichten musste, der mit Wagen oder Vieh die Mulde überqueren wollte.

Im Laufe des achtzehnten Jahrhunderts entwickelte sich die Brücke zu einem belebten Treffpunkt. Auf ihren breiten Gehwegen boten Fischer und Bäuerinnen ihre Waren an, und an Markttagen soll das Gedränge so groß gewesen sein, dass die Stadtwache den Verkehr regeln musste. Mehrere Chronisten berichten zudem von einem kleinen Heiligenbild in der mittleren Nische, vor dem Reisende um eine sichere Fahrt baten.

Während der Napoleonischen Kriege wurde der östliche Bogen im Frühjahr 1813 von zurückweichenden Truppen gesprengt, um die Verfolger aufzuhalten. Die Bewohner errichteten daraufhin in wenigen Wochen einen hölzernen Notsteg, der fast zwanzig Jahre lang in Gebrauch blieb, bevor der Bogen mit Unterstützung der Landesregierung wieder aufgebaut werden konnte.

Mit dem Bau der Eisenbahnlinie im Jahr 1867 verlor die Brücke ihre Bedeutung für den Fernhandel, da die Waren nun schneller und billiger mit dem Zug befördert wurden. Der Brückenzoll wurde wenig später abgeschafft, und die Stadt überlegte sogar, das baufällige Bauwerk abzureißen. Dass es dazu nicht kam, verdankt Lindenau vor allem einem Verein von Bürgern, der Spenden sammelte und die notwendigen Reparaturen selbst organisierte.

Heute steht die Brücke unter Denkmalschutz und ist nur noch für Fußgänger und Radfahrer geöffnet. Jedes Jahr im September feiert die Gemeinde auf ihr ein Fest, bei dem an die lange und wechselvolle Geschichte des Bauwerks erinnert wird. Eine kleine Ausstellung im alten Zollhaus am westlichen Ufer zeigt Pläne, Zeichnungen und Fotografien aus mehr als fünf Jahrhunderten."""

OUTPUT = """Die Brücke über die Mulde verband das Dorf Lindenau mit der Handelsstadt auf der anderen Seite. Sie war viele Jahrhunderte lang eines der wichtigsten Bauwerke der Region. Sie wurde im Jahr 1412 aus Holz gebaut. Nach großen Hochwassern in den Jahren 1501 und 1573 musste man sie fast ganz neu bauen. Das kostete die Gemeinde jedes Mal sehr viel Geld.

Im Jahr 1688 beschloss der Rat der Stadt, eine Brücke aus Stein zu bauen. Ein Baumeister aus Dresden leitete die Arbeiten. Sie dauerten fast elf Jahre, weil oft das Geld fehlte und man im Winter nicht am Fluss arbeiten konnte. Um den Bau zu bezahlen, mussten alle Händler mit Wagen oder Tieren einen Zoll zahlen.

Im achtzehnten Jahrhundert trafen sich viele Menschen auf der Brücke. Fischer und Bäuerinnen verkauften dort ihre Waren. An Markttagen war es so voll, dass die Stadtwache helfen musste. In der Mitte der Brücke gab es ein kleines Bild, vor dem Reisende um eine gute Fahrt beteten.

Im Jahr 1813 sprengten Soldaten einen Teil der Brücke. Die Bewohner bauten schnell einen Steg aus Holz. Erst fast zwanzig Jahre später wurde die Brücke mit Hilfe der Regierung repariert.

Im Jahr 1867 kam die Eisenbahn. Danach brauchten die Händler die Brücke kaum noch, weil der Zug schneller und billiger war. Der Zoll wurde abgeschafft, und die Stadt wollte die alte Brücke sogar abreißen. Ein Verein von Bürgern sammelte aber Geld und ließ die Brücke reparieren.

Heute ist die Brücke ein Denkmal. Nur Fußgänger und Radfahrer dürfen sie benutzen. Jedes Jahr im September gibt es auf der Brücke ein Fest. Im alten Zollhaus gibt es eine kleine Ausstellung mit Plänen, Bildern und Fotos."""


def make_study(folder: Path) -> Study:
    study = create_study(folder / "long.mbstudy")
    with study.session() as s:
        add_pairs(s, "lindenau", [(SOURCE, OUTPUT)])
        cfg = load_settings(s)
        cfg.qc_enabled = False
        cfg.diff_highlighting = True
        save_settings(s, cfg)
    return study


def shoot_long(app: QApplication) -> Path:
    app.setPalette(light_palette())
    with tempfile.TemporaryDirectory() as tmp:
        study = make_study(Path(tmp))
        window, screen = rating_window(study)
        for _ in range(20):
            app.processEvents()
        screen.page_texts(1)  # what Shift+Page Down does
        screen.rows[0].scale.set_value(64)
        for _ in range(20):
            app.processEvents()
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        path = OUT_DIR / "rate-long-text.png"
        window.grab().save(str(path), "PNG", 9)
        window.close()
        study.close()
    return path


def main() -> int:
    app = screenshot_app()
    path = shoot_long(app)
    print(f"{path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
