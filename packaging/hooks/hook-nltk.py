"""NLTK for the bundle: its code only.

The stock hook also copies every nltk_data folder of the build machine into the bundle;
the program builds its own NLTK folder (WordNet, CMUdict) from packaged data instead, and
NLTK's VERSION file is listed in packaging/bundle_data.py.
"""

datas: list[tuple[str, str]] = []
hiddenimports: list[str] = []
