"""The kinds of fact a simulated life holds, and the many ways a person says each.

A curator that learns one sentence per fact learns the template, not the language, so every kind
has several surface forms for each act: `state` (the value as it is), `change` (a new value said
as news), `implied` (a change only implied: "we're settling into the new flat in Porto" never
says "moved") and `repeat` (the value again, unchanged, in passing). Every form is first person:
a life is told by the one living it (and by the friend, of their own life). No content word is
shared by two kinds' values: the update scorer ties values by content words, so a goal "learn
to sail" would state the hobby "sailing". `reference` is how the ground truth states a value,
the text the kept rule of `bench writes` compares stored lines with (`eval/writes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One attribute of a person: its name as the truth keys it, its values, and its forms."""

    attribute: str
    values: tuple[str, ...]
    state: tuple[str, ...]
    change: tuple[str, ...]
    implied: tuple[str, ...]
    repeat: tuple[str, ...]
    reference: str  # "{name}'s home is {v}"


KINDS: tuple[Kind, ...] = (
    Kind(
        "home",
        (
            "Lisbon",
            "Porto",
            "Berlin",
            "Montreal",
            "Osaka",
            "Denver",
            "Prague",
            "Nairobi",
            "Melbourne",
            "Valencia",
        ),
        (
            "I live in {v}, not far from the old market.",
            "I currently live in {v} and the rent is fine.",
            "Life in {v} is good, honestly.",
        ),
        (
            "Big news: we moved to {v} last weekend!",
            "I have relocated to {v} for good.",
            "I finally moved to {v}, boxes everywhere.",
        ),
        (
            "We're settling into the new flat in {v}, the light is lovely.",
            "I moved into a new apartment in {v}, still unpacking.",
        ),
        ("Life in {v} is good, the weather has been kind.", "I still live in {v}, nothing new there."),
        "{name}'s home is {v}",
    ),
    Kind(
        "job",
        ("nurse", "data analyst", "carpenter", "teacher", "architect", "pharmacist", "translator", "chef"),
        (
            "I work as a {v}, it keeps me busy.",
            "I'm working as a {v} these days.",
            "Work as a {v} keeps me on my toes.",
        ),
        (
            "I started a new job as a {v} on Monday!",
            "I landed a job as a {v}, I start next week.",
            "Guess what, I got a new job as a {v}.",
        ),
        ("My new job is {v}, the team seems kind.", "I'm employed as a {v} now, different hours entirely."),
        ("Another long week, I work as a {v} after all.", "I'm still working as a {v}."),
        "{name}'s job is {v}",
    ),
    Kind(
        "diet",
        ("vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "dairy-free"),
        ("I'm {v}, have been for a while.", "I've been eating {v} for years."),
        ("I've gone {v}, a big change for me.", "I switched to being {v} last month."),
        ("I became {v} after that documentary.",),
        ("Still {v} here, no cheating!", "I'm still {v}, it suits me."),
        "{name}'s diet is {v}",
    ),
    Kind(
        "favorite food",
        ("Thai", "Italian", "Ethiopian", "Mexican", "Georgian", "Lebanese", "Vietnamese", "Peruvian"),
        ("My favorite food is {v}, no contest.", "Honestly my favourite food is {v}."),
        ("{v} is my new favorite food.", "My favorite food is now {v}, believe it or not."),
        ("{v} is now my favorite food, that dinner changed me.",),
        ("{v} is still my favorite food.",),
        "{name}'s favorite food is {v}",
    ),
    Kind(
        "hobby",
        ("pottery", "rock climbing", "chess", "birdwatching", "woodworking", "sailing", "salsa dancing"),
        (
            "I spend most weekends on {v}, it's my main hobby.",
            "I spend my evenings on {v} and that's my main hobby.",
        ),
        ("I've picked up {v} and it has become my main hobby.", "I took up {v}, it is my main hobby."),
        ("I've picked up {v} and it has become my main hobby, sorry old friends.",),
        ("Saturday was all {v} again.",),
        "{name}'s hobby is {v}",
    ),
    Kind(
        "car",
        ("Subaru Outback", "Toyota Prius", "Honda Civic", "Volvo XC60", "Mazda MX-5", "Kia Niro"),
        ("I drive a {v}, it's been reliable.", "I mostly drive a {v} to work."),
        ("I sold my old car and bought a {v}.", "I traded in my car and got a {v}!"),
        ("I sold my old car and got a {v}, the dealer was nice.",),
        ("I still drive a {v}.",),
        "{name}'s car is {v}",
    ),
    Kind(
        "travel plan",
        ("Iceland", "Peru", "Vietnam", "Morocco", "Norway", "Chile", "Greece", "Japan"),
        ("I'm planning a trip to {v} next year.", "I'm currently planning a trip to {v}."),
        (
            "Change of plans: the trip is going to be to {v} instead.",
            "The trip is now to {v}, flights are cheaper.",
        ),
        ("New plan, the trip is going to be to {v}.",),
        ("I'm still planning a trip to {v}.",),
        "{name}'s travel plan is {v}",
    ),
    Kind(
        "morning drink",
        ("espresso", "green tea", "matcha latte", "black coffee", "chai", "yerba mate"),
        ("I can't start the day without a {v}.", "My morning drink of choice is {v}."),
        ("I switched my morning drink to {v}.", "I swapped my morning drink for {v}."),
        ("I changed my morning drink to {v}, my doctor will be pleased.",),
        ("I can't start the day without my {v}.",),
        "{name}'s morning drink is {v}",
    ),
    Kind(
        "language course",
        ("Spanish", "Japanese", "Portuguese", "Arabic", "German", "Korean", "Swahili"),
        ("I'm taking an evening course in {v}.", "My class in {v} is on Thursdays."),
        ("I dropped my old course and started learning {v}.", "I started learning {v}, the grammar is wild."),
        ("I signed up for classes in {v} instead.",),
        ("My course in {v} was fun this week.",),
        "{name}'s language course is {v}",
    ),
    Kind(
        "goal",
        (
            "run a marathon",
            "open a bakery",
            "learn the cello",
            "write a novel",
            "buy a house",
            "walk the Camino",
        ),
        ("My goal is to {v}.", "My main goal is to {v}."),
        ("New idea: my goal is to {v}.", "I've changed my mind, my goal is to {v}."),
        ("Forget the old idea; my goal is to {v}.",),
        ("My goal is to {v}, still.",),
        "{name}'s goal is to {v}",
    ),
)

CHITCHAT = (
    "Did you catch the game last night?",
    "The weather has been all over the place lately.",
    "I watched a documentary about octopuses, wild stuff.",
    "My neighbor's dog keeps barking at the mail carrier.",
    "I finally fixed the squeaky door in the hallway.",
    "Traffic was terrible on the way home today.",
    "Have you seen any good movies recently?",
    "I tried a new podcast about urban planning.",
    "The power went out for an hour yesterday.",
    "I spent the evening sorting old photos.",
    "There's a street fair downtown this weekend.",
    "I've been sleeping badly, too much screen time.",
    "Somebody left a huge pumpkin on our doorstep.",
    "The bakery on the corner closed, sad.",
)
