"""`python benchmarks/corpus-interactive/restore.py MIRRORS OUT [--batch N]`: the interactive
corpus's restore under the path its commands have used, the same as
`python benchmarks/restore_corpus.py interactive MIRRORS OUT [--batch N]` (that tool, one for
every labelled corpus, says what it does)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from restore_corpus import main  # found through the path just set

if __name__ == "__main__":
    sys.exit(main(corpus_name="interactive"))
