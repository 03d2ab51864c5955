"""Statute research questions shared by the keyword-retrieval benchmarks (timing only, never scored)."""

QUESTIONS = [
    "When must a landlord return a tenant's security deposit and what may be deducted?",
    "How much notice must a landlord give before terminating a month-to-month tenancy?",
    "Can a tenant withhold rent when the landlord fails to make repairs?",
    "What is the limitation period for a personal injury action?",
    "When does the statute of limitations for breach of contract begin to run?",
    "Is the limitations period tolled while the plaintiff is a minor?",
    "What are the grounds for granting a divorce?",
    "How does the court divide marital property and debts in a divorce?",
    "When may a court award spousal support or alimony?",
    "Is it unlawful for an employer to discriminate because of arrest and court record?",
    "Can an employer retaliate against an employee who reports a violation of law?",
    "When must an employer pay final wages to a discharged employee?",
    "May an employer deduct amounts from an employee's wages?",
    "What warranties arise in a sale of goods and how may they be disclaimed?",
    "When is a security interest perfected by filing a financing statement?",
    "What is a holder in due course of a negotiable instrument?",
    "How are jurors selected and who is disqualified from jury service?",
    "What remedies does a consumer have for unfair or deceptive trade practices?",
    "Who may bring a wrongful death action and what damages are recoverable?",
    "When is a contractor entitled to a mechanic's lien on real property?",
]
