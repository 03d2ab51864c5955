"""Label exchange: a pool's items and completed labels out as Label Studio tasks and an Argilla dataset, and
annotations from either tool back in as their own label source (``LabelImport``), never as blind judgments.

``texts``: what every export carries of an item and every import is checked against (the item's texts).
``labelstudio`` and ``argilla``: one format each, both ways. ``services``: the import. ``views``/``api``: pages.
"""
