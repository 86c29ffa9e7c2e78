"""Screenshots of the Campaign page on a lead's study in mid-campaign.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.tools.screenshots_campaign [OUT_DIR]

Builds the scripted campaign's study (60 items, overlap 2; tests/kits/campaign_study.py)
in a temporary data folder with four raters: ana and ben rated their whole kit, carla
part of hers, and dana's kit has not come back. The kits are rated through the rating
screen's engine in a blink, so each rating is given the time a person takes (4 to 20 s)
before the kit goes back. Saves resources/screenshots/campaign.png (the window at
1280×720, light) and, in OUT_DIR (default: a temporary folder), the window at 1280×720 and
1024×640 in both themes, and the top-up dialog over it, as campaign-WIDTH-THEME.png, and
the page on the demo study, which has raters but no kits (campaign-no-kits-1024-light.png).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from tests.tools.shot_studies import SIZES

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "resources" / "screenshots"
DOCS = {"campaign-1280-light.png": "campaign.png"}
RATERS = ("ana", "ben", "carla", "dana")


def _human_seconds(n: int) -> float:
    """Each item looked at as long as a person takes over it, 4 to 20 seconds: given through
    the rating engine, since collect refuses a kit edited outside the app."""
    return 4 + (n * 7.919) % 16


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mb-camp-"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEANINGBENCH_HOME"] = tmp
        from tests.kits.campaign_study import campaign_study
        from tests.tools.screenshots import wait
        from tests.tools.screenshots_laptop import grab
        from tests.tools.shot_studies import looks, window_on

        path = campaign_study(Path(tmp), RATERS, RATERS[:3], seconds=_human_seconds)
        app, window = window_on(path, "campaign")
        page = window.page("campaign")
        wait(app, 60, lambda: page.figures is not None)
        for width, theme in looks(app, window):
            grab(app, window, out, f"campaign-{width}-{theme}.png")
        window.resize(*SIZES[0])
        dialog = page.show_top_up_dialog()
        if dialog is not None:
            dialog.move(window.frameGeometry().center() - dialog.rect().center())
            wait(app, 0.3)
            grab(app, window, out, "campaign-top-up-1280-light.png")
            dialog.close()
        from meaningbench.datasets.demo import build_demo_study

        demo = build_demo_study(Path(tmp) / "demo.mbstudy")
        window.studies.open_path(demo)
        wait(app, 60, lambda: window.context.path == demo)
        window.show_page("campaign")
        page = window.page("campaign")
        window.resize(*SIZES[1])
        wait(app, 60, lambda: page.figures is not None)
        grab(app, window, out, "campaign-no-kits-1024-light.png")
        for shot, name in DOCS.items():
            shutil.copyfile(out / shot, OUT / name)
            print(f"  {(OUT / name).relative_to(ROOT)}")
        window.close()
        print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
