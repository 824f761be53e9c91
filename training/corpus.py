"""The toy language the course's small model learns: generated here, from nothing but rules.

Six kinds of sentence, each ending in ".":

    the big cat chases the small dogs .      agreement: the verb follows its subject's number
    count 3 4 5 6 .                           each number is one more than the one before
    down 7 6 5 .                              each number is one less
    copy b d a | b d a .                      after "|", the letters again, in order
    reverse b d a | a d b .                   after "|", the letters backwards
    3 plus 4 is 7 .   7 minus 3 is 4 .        sums and differences of the numbers 0-9

The rules depend on content (which noun, which numbers) and on order (copy and reverse are the
same letters, in another order; "7 minus 3" is not "3 minus 7"). Every token is labelled with the
rule that decides it, so the course can ask which predictions need to know the order.
"""


ADJECTIVES = ["big", "small", "red", "old"]
NOUNS = ["cat", "dog", "bird", "fox"]
PLURALS = ["cats", "dogs", "birds", "foxes"]
VERBS = ["sees", "chases", "likes"]          # after a single subject
VERBS_PLURAL = ["see", "chase", "like"]      # after a plural subject
LETTERS = list("abcdefgh")
NUMBERS = [str(n) for n in range(19)]        # 0-9, and sums up to 18

VOCAB = ([".", "|", "the"] + ADJECTIVES + NOUNS + PLURALS + VERBS + VERBS_PLURAL
         + ["count", "down", "copy", "reverse", "plus", "minus", "is"] + LETTERS + NUMBERS)
INDEX = {word: i for i, word in enumerate(VOCAB)}

# What decides each token (one label per token). "free" tokens are chosen at random by the
# generator, so no model can predict them better than their share.
KINDS = ["free", "grammar", "verb", "count", "copy", "reverse", "sum", "difference", "end"]
ORDER_KINDS = ("count", "copy", "reverse", "difference")   # decided by the order of earlier tokens


def _noun_phrase(rng):
    words = [("the", "grammar")]
    if rng.random() < 0.5:
        words.append((rng.choice(ADJECTIVES), "free"))
    plural = rng.random() < 0.5
    words.append((rng.choice(PLURALS if plural else NOUNS), "free"))
    return words, plural


def sentence(rng):
    """One sentence as a list of (word, kind) pairs, drawn with ``rng`` (a random.Random).

    The first word picks the kind of sentence, so it is always "free"."""
    words = _sentence(rng)
    return [(words[0][0], "free")] + words[1:]


def _sentence(rng):
    kind = rng.choice(["agreement", "agreement", "count", "down", "copy", "reverse", "plus", "minus"])
    if kind == "agreement":
        subject, plural = _noun_phrase(rng)
        verb = rng.randrange(len(VERBS))
        obj, _ = _noun_phrase(rng)
        return subject + [((VERBS_PLURAL if plural else VERBS)[verb], "verb")] + obj + [(".", "end")]
    if kind in ("count", "down"):
        length = rng.randint(3, 6)
        step = 1 if kind == "count" else -1
        start = rng.randint(0, 10 - length) if step == 1 else rng.randint(length - 1, 9)
        numbers = [(str(start + step * i), "free" if i == 0 else "count") for i in range(length)]
        return [(kind, "free")] + numbers + [(".", "end")]
    if kind in ("copy", "reverse"):
        letters = [rng.choice(LETTERS) for _ in range(rng.randint(2, 5))]
        answer = letters if kind == "copy" else letters[::-1]
        return ([(kind, "free")] + [(x, "free") for x in letters] + [("|", "grammar")]
                + [(x, kind) for x in answer] + [(".", "end")])
    a, b = rng.randint(0, 9), rng.randint(0, 9)
    if kind == "minus":
        a, b = max(a, b), min(a, b)
    result = a + b if kind == "plus" else a - b
    return [(str(a), "free"), (kind, "free"), (str(b), "free"), ("is", "grammar"),
            (str(result), "sum" if kind == "plus" else "difference"), (".", "end")]


def text(rng, length):
    """Whole sentences, one after another, cut to ``length`` tokens.

    Returns (token ids, kind ids), two lists of ``length`` ints.
    """
    ids, kinds = [], []
    while len(ids) < length:
        for word, kind in sentence(rng):
            ids.append(INDEX[word])
            kinds.append(KINDS.index(kind))
    return ids[:length], kinds[:length]
