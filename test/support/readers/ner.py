"""Reads named entities back with spaCy: the CoNLL-2003 file with spaCy's CoNLL NER converter
(what `spacy convert -c ner` runs), the offsets file with Doc.char_span on spaCy's tokenizer."""
import json
import sys

import spacy
from spacy.training.converters import conll_ner_to_docs

with open(sys.argv[1], encoding="utf-8") as f:
    conll = f.read()
docs = conll_ner_to_docs(conll, no_print=True)
from_conll = [{"text": d.text.strip(), "entities": [[e.text, e.label_] for e in d.ents]} for d in docs]

nlp = spacy.blank("en")
from_offsets = []
with open(sys.argv[2], encoding="utf-8") as f:
    for line in f:
        item = json.loads(line)
        doc = nlp.make_doc(item["text"])
        spans = [doc.char_span(s, e, label=l, alignment_mode="strict") for s, e, l in item["entities"]]
        assert all(s is not None for s in spans), "an entity does not fall on token boundaries"
        doc.ents = spans
        from_offsets.append({"task_id": item["task_id"], "entities": [[e.text, e.label_] for e in doc.ents]})
print(json.dumps({"conll": from_conll, "offsets": from_offsets}))
