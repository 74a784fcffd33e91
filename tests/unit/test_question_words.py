"""Which of a question's words a stored text holds (memory_core.ops.recall.covered): the word
or a form of it, a compound's two halves, a capitalised initialism's words; and what is not
held: a lower-case word whose letters happen to be initials, a near word that is another."""

from __future__ import annotations

from memory_core.ops.recall import content_words, covered, negated


def held(question: str, text: str) -> set[str]:
    return set(covered(content_words(question), text))


def test_a_word_or_a_form_of_it():
    assert held("When did the supplier warn them?", "Valtec warned Company X.") == {"warn"}
    assert held("Which citizenship?", "Bob is a citizen of France.") == {"citizenship"}
    assert held("Who chairs it?", "The chairperson is Ann.") == set()
    # the same stem, where the first letters alone do not tell it
    assert held("Who is living in Paris?", "Alice lives in Paris.") == {"living", "paris"}
    assert held("Where did Kit Lambert die?", "Kit Lambert died in Cairo.") == {"die", "kit", "lambert"}


def test_an_irregular_verb_by_its_past_forms():
    """A question asks with the base after "did"; the fact says the past, which no stemmer
    relates to it; a word spelled like another's past form stays itself."""
    assert held("What did the audit find?", "The audit found the valves were swapped.") == {"audit", "find"}
    assert held("What did Ann buy?", "Ann bought a car.") == {"ann", "buy"}
    assert held("Whom did Ann meet?", "Ann met Tom in Oslo.") == {"ann", "meet"}
    assert held("Where did Ann go?", "Ann went to Oslo.") == {"ann", "go"}
    assert held("What did Ann write?", "Ann has written two novels.") == {"ann", "write"}
    assert held("Who founded Acme?", "Acme was founded by Ann.") == {"founded", "acme"}


def test_a_compound_by_its_two_halves():
    assert held("What is the birthplace of Bob?", "Bob's place of birth is Lyon.") == {"birthplace", "bob"}
    assert held("What is the birthplace of Bob?", "Bob was born in a small place.") == {"bob"}


def test_an_initialism_written_in_capitals_by_the_words_it_abbreviates():
    question = "Who is the CEO of the biggest bank in the USA?"
    assert content_words(question).initialisms == {"ceo", "usa"}
    text = "The chief executive officer of the biggest bank of the United States of America is Ann."
    assert held(question, text) == {"ceo", "biggest", "bank", "usa"}
    # only consecutive words spell it, and only a word the question writes in capitals is read so
    assert held("Who is the CEO?", "The chief financial officer executes it.") == set()
    assert held("Which map is it?", "Madonna, Alice and Peter.") == set()


def test_names_that_only_begin_alike_are_other_words():
    assert held("When is Mario Lopez's birthday?", "Maria Lopez's birthday is on 3 May.") == {
        "lopez",
        "birthday",
    }
    assert held("Where does Carlos Diaz live?", "Carla Diaz lives in Valencia.") == {"diaz", "live"}
    assert held("What does Paula do?", "Paul is a baker.") == set()
    # word forms still hold: a longer word that begins with it, or one sharing six letters or more
    assert held("Which American city?", "He was born in America.") == {"american"}
    assert held("What was produced there?", "The production moved.") == {"produced"}
    assert held("Who is its creator?", "It was created by Ann.") == {"creator"}
    assert held("Who is the writer?", "It was written by Ann.") == {"writer"}
    assert held("Is it in Georgia?", "George lives there.") == set()


def test_words_that_ask_nothing_a_fact_states_are_not_the_questions():
    assert content_words("Isn't Maria married to Jorge?") == {"maria", "married", "jorge"}
    assert content_words("Doesn't Maria live in Lisbon anymore?") == {"maria", "live", "lisbon"}
    assert content_words("Does Maria still work there now?") == {"maria", "work"}
    assert content_words("Who won the cup?") == {"won", "cup"}


def test_the_entities_a_question_names_and_the_user_it_speaks_for():
    """A run of capitalised words past the first, a word holding a digit, and the user for "I"
    (not for "my": "my wife" asks about the wife); accents fold both ways."""
    assert content_words("Where does Lee Park live?").names == (("lee", "park"),)
    assert content_words("Where is Company7 Ltd headquartered?").names == (("company7", "ltd"),)
    assert content_words("Who is the CEO of Acme?").names == (("acme",),)  # an initialism names no entity
    mine = content_words("Where do I work?")
    assert "user" in mine and mine.names == (("user",),)
    wife = content_words("Where does my wife work?")
    assert "user" in wife and wife.names == ()
    assert held("Where does Jose Muller live?", "José Müller lives in Zürich.") == {"jose", "muller", "live"}
    assert held("Where does Soren Odegard work?", "Søren Ødegård works at Novo.") == {
        "soren",
        "odegard",
        "work",
    }


def test_a_name_is_held_only_by_the_entity_a_fact_is_about():
    """With a triple, a name the question gives is held by the fact's subject (its entity, not
    its possessor: "user's mother" is the mother) or object, each word as written."""
    from memory_core.ops.recall import held_by, names_held

    def fact(claim, subject, obj):
        return {"claim": claim, "subject": subject, "predicate": "p", "object": obj, "type": "Evidence"}

    words = content_words("Am I allergic to peanuts?")
    son = fact("User's son Max is allergic to peanuts.", "Max", "peanuts")
    assert held_by(words, son) == {"allergic", "peanuts"} and names_held(words, son) == 0
    assert names_held(words, fact("User is allergic to dust.", "user", "dust")) == 1
    mother = fact("User's mother lives in Faro.", "user's mother", "Faro")
    assert "user" not in held_by(content_words("Where do I live?"), mother)
    other = content_words("Where is Company7 Ltd headquartered?")
    assert names_held(other, fact("Company74 Ltd is headquartered in Nice.", "Company74 Ltd", "Nice")) == 0
    assert names_held(other, fact("Company7 Ltd is headquartered in Lyon.", "Company7 Ltd", "Lyon")) == 1


def test_words_that_say_now_or_count_ask_nothing_a_fact_states():
    assert sorted(content_words("Where am I living these days?")) == ["living", "user"]
    assert sorted(content_words("Who currently runs Acme right now?")) == ["acme", "runs"]
    assert sorted(content_words("How many children does Bob have?")) == ["bob", "children"]
    assert sorted(content_words("What is the name of the CEO?")) == ["ceo"]


def test_a_quoted_title_is_a_name_held_only_by_a_text_saying_it_in_order():
    """The words of a title the question quotes, stop words too: "Love Me Do" holds the word
    "love" of "Love You To" but is another song; a capitalised word inside the quotes is no
    name of its own."""
    from memory_core.ops.recall import held_by, names_held

    def fact(claim, subject, obj):
        return {
            "claim": claim,
            "subject": subject,
            "predicate": "performer",
            "object": obj,
            "type": "Evidence",
        }

    words = content_words('Who manages the performer of "Love You To"?')
    assert words.names == (("love", "you", "to"),) and "love" in words
    other = fact("Love Me Do was performed by Vessaline Quorn.", "Love Me Do", "Vessaline Quorn")
    song = fact("Love You To was performed by Ottilie Brask.", "Love You To", "Ottilie Brask")
    assert names_held(words, other) == 0 and "love" not in held_by(words, other)
    assert names_held(words, song) == 1 and "love" in held_by(words, song)
    # in order: the same words otherwise arranged are another title
    assert names_held(words, fact("To Love You was performed by Ann.", "To Love You", "Ann")) == 0
    # a title of stop words only is still the entity the question names
    assert content_words('Who performed "From Me to You"?').names == (("from", "me", "to", "you"),)
    # a quoted title beside a capitalised name: each is a name
    assert content_words('Did Lee Park sing "Something"?').names == (("something",), ("lee", "park"))
    # "I" in a quoted title is a word of it, not the user
    survive = content_words('Who sang "I Will Survive"?')
    assert survive.names == (("i", "will", "survive"),) and "user" not in survive
    # a title's possessive "s" and its "My" are its own words, held by a text saying it
    song = content_words('Who manages the performer of "She\'s Leaving Home"?')
    said = fact("She's Leaving Home was performed by Ann.", "She's Leaving Home", "Ann")
    assert song.names == (("she", "leaving", "home"),) and names_held(song, said) == 1
    car = content_words('Who performed "Drive My Car"?')
    assert car.names == (("drive", "my", "car"),) and "user" not in car
    assert names_held(car, fact("Drive My Car was performed by Ann.", "Drive My Car", "Ann")) == 1


def test_negation_time_and_names_in_scripts_without_capitals():
    """A question asked in the negative, one asking when, and a name in a script with no
    capitals (an entity the question names, as a capitalised one is)."""
    assert content_words("Which language does Odile not speak?").negated
    assert content_words("Who doesn't drive?").negated
    assert not content_words("Which language does Odile speak?").negated
    assert not content_words('Who sang "Don\'t Stop Me Now"?').negated  # a title's words
    assert negated("Ivar can't drive.") and negated("I don't have a cat anymore.")
    # written with a capital, a title's words (stored facts do not quote their titles)
    assert not negated("Can't Buy Me Love was performed by The Beatles.")
    assert not negated("Dr. No was directed by Terence Young; Never Say Never Again by Irvin Kershner.")
    assert content_words("When did Kendra join Orchid?").when
    assert content_words("In which year was the dam completed?").when
    assert not content_words("Where does Kendra work?").when
    assert content_words("Where does 王芳 live?").names == (("王芳",),)
    assert content_words("Where does Anna Berg live?").names == (("anna", "berg"),)
