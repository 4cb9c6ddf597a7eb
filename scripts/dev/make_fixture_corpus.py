#!/usr/bin/env python3
"""Writes the tiny English-German fixture corpus used by the tests (tests/fixtures/tiny*).

Template sentences in the style of Multi30k image descriptions ("a man is riding a red bike ."),
with German articles and adjective endings inflected for gender and case, so the corpus has real
umlauts and ß (UTF-8 matters) and a model can overfit it. Deterministic: a fixed seed, stdlib
only. Sentences have 4-10 words (the final '.' is not counted); train and validation pairs are
disjoint.

usage: scripts/dev/make_fixture_corpus.py [OUT_DIR]   (default: tests/fixtures next to this script)
"""
import itertools
import pathlib
import random
import sys

SEED = 20240611
N_TRAIN = 400
N_VALID = 40
MAX_WORDS = 10

# Singular subjects: (English, German nominative).
SUBJECTS = [
    ("a man", "ein Mann"), ("a woman", "eine Frau"), ("a boy", "ein Junge"),
    ("a girl", "ein Mädchen"), ("a child", "ein Kind"), ("an old man", "ein alter Mann"),
    ("a young woman", "eine junge Frau"), ("a dog", "ein Hund"), ("a cook", "ein Koch"),
    ("a worker", "ein Arbeiter"), ("a musician", "ein Musiker"),
    ("a little girl", "ein kleines Mädchen"),
]
# Plural subjects.
PLURAL_SUBJECTS = [
    ("two men", "zwei Männer"), ("three women", "drei Frauen"), ("two boys", "zwei Jungen"),
    ("some children", "einige Kinder"), ("two dogs", "zwei Hunde"), ("four friends", "vier Freunde"),
]
# Intransitive verbs: (English -ing form, German 3rd singular, German plural).
INTRANSITIVE = [
    ("running", "läuft", "laufen"), ("sitting", "sitzt", "sitzen"), ("standing", "steht", "stehen"),
    ("playing", "spielt", "spielen"), ("waiting", "wartet", "warten"),
    ("sleeping", "schläft", "schlafen"), ("dancing", "tanzt", "tanzen"),
    ("laughing", "lacht", "lachen"), ("reading", "liest", "lesen"),
]
# Transitive verbs (take an accusative object).
TRANSITIVE = [
    ("holding", "hält", "halten"), ("carrying", "trägt", "tragen"),
    ("looking at", "betrachtet", "betrachten"), ("buying", "kauft", "kaufen"),
    ("looking for", "sucht", "suchen"), ("cleaning", "putzt", "putzen"),
]
# Objects: (English, German singular, gender, German plural).
OBJECTS = [
    ("ball", "Ball", "m", "Bälle"), ("hat", "Hut", "m", "Hüte"), ("apple", "Apfel", "m", "Äpfel"),
    ("bike", "Fahrrad", "n", "Fahrräder"), ("book", "Buch", "n", "Bücher"),
    ("car", "Auto", "n", "Autos"), ("bag", "Tasche", "f", "Taschen"),
    ("jacket", "Jacke", "f", "Jacken"), ("bottle", "Flasche", "f", "Flaschen"),
]
# Colours: (English, German stem).
COLOURS = [
    ("red", "rot"), ("blue", "blau"), ("green", "grün"), ("yellow", "gelb"),
    ("black", "schwarz"), ("white", "weiß"), ("brown", "braun"), ("grey", "grau"),
]
# Places: (English, German dative phrase).
PLACES = [
    ("in the park", "im Park"), ("on the beach", "am Strand"), ("in the kitchen", "in der Küche"),
    ("on the street", "auf der Straße"), ("in front of the house", "vor dem Haus"),
    ("near the river", "am Fluss"), ("in the snow", "im Schnee"),
    ("on the bridge", "auf der Brücke"), ("in the garden", "im Garten"),
    ("at the station", "am Bahnhof"), ("under a tree", "unter einem Baum"),
    ("by the lake", "am See"),
]
# Clothing worn: (English, German singular, gender).
CLOTHES = [("shirt", "Hemd", "n"), ("jacket", "Jacke", "f"), ("dress", "Kleid", "n"),
           ("coat", "Mantel", "m")]
NUMBERS = [("two", "zwei"), ("three", "drei"), ("four", "vier")]


def en_indefinite(phrase):
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def de_accusative(noun, gender, colour=None):
    """Indefinite article + optional adjective + noun, accusative (einen roten Ball)."""
    article = {"m": "einen", "f": "eine", "n": "ein"}[gender]
    if colour is None:
        return f"{article} {noun}"
    ending = {"m": "en", "f": "e", "n": "es"}[gender]
    return f"{article} {colour}{ending} {noun}"


def de_dative(noun, gender, colour):
    """Indefinite article + adjective + noun, dative (einem roten Hemd)."""
    article = {"m": "einem", "f": "einer", "n": "einem"}[gender]
    return f"{article} {colour}en {noun}"


def transitive_pairs():
    for (se, sd), (ve, vd, _), (oe, od, g, _), (ce, cd) in itertools.product(
            SUBJECTS, TRANSITIVE, OBJECTS, COLOURS):
        yield (f"{se} is {ve} {en_indefinite(ce + ' ' + oe)} .",
               f"{sd} {vd} {de_accusative(od, g, cd)} .")


def intransitive_pairs():
    for (se, sd), (ve, vd, _), (pe, pd) in itertools.product(SUBJECTS, INTRANSITIVE, PLACES):
        yield f"{se} is {ve} {pe} .", f"{sd} {vd} {pd} ."
    for (se, sd), (ve, _, vd), (pe, pd) in itertools.product(PLURAL_SUBJECTS, INTRANSITIVE, PLACES):
        yield f"{se} are {ve} {pe} .", f"{sd} {vd} {pd} ."


def object_place_pairs():
    for (se, sd), (ve, vd, _), (oe, od, g, _), (pe, pd) in itertools.product(
            SUBJECTS, TRANSITIVE, OBJECTS, PLACES):
        yield f"{se} is {ve} {en_indefinite(oe)} {pe} .", f"{sd} {vd} {de_accusative(od, g)} {pd} ."


def clothing_pairs():
    for (se, sd), (ce, cd), (ke, kd, g), (ve, vd, _) in itertools.product(
            SUBJECTS, COLOURS, CLOTHES, INTRANSITIVE):
        yield (f"{se} in {en_indefinite(ce + ' ' + ke)} is {ve} .",
               f"{sd} in {de_dative(kd, g, cd)} {vd} .")


def plural_object_pairs():
    for (se, sd), (ve, _, vd), (ne, nd), (ce, cd), (oe, _, _, op) in itertools.product(
            PLURAL_SUBJECTS, TRANSITIVE, NUMBERS, COLOURS, OBJECTS):
        yield f"{se} are {ve} {ne} {ce} {oe}s .", f"{sd} {vd} {nd} {cd}e {op} ."


def short_enough(pair):
    return all(len(side.split()) - 1 <= MAX_WORDS for side in pair)


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests" / "fixtures"
    rng = random.Random(SEED)
    families = [transitive_pairs, intransitive_pairs, object_place_pairs, clothing_pairs,
                plural_object_pairs]
    per_family = (N_TRAIN + N_VALID) // len(families)
    chosen = []
    for family in families:
        candidates = sorted(p for p in family() if short_enough(p))
        chosen.extend(rng.sample(candidates, per_family))
    rng.shuffle(chosen)
    assert len({en for en, _ in chosen}) == len(chosen), "duplicate source sentence"
    splits = {"tiny": chosen[:N_TRAIN], "tiny_val": chosen[N_TRAIN:N_TRAIN + N_VALID]}
    out.mkdir(parents=True, exist_ok=True)
    for name, pairs in splits.items():
        for index, lang in enumerate(("en", "de")):
            path = out / f"{name}.{lang}"
            path.write_text("".join(pair[index] + "\n" for pair in pairs), encoding="utf-8")
            print(f"wrote {path} ({len(pairs)} lines)")


if __name__ == "__main__":
    main()
