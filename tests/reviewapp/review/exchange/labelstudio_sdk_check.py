"""Check a Label Studio export with Label Studio's own SDK, outside the test suite.

Not a test module: label-studio-sdk cannot join the dev extra (2.1.2 requires opencv-python-headless 4.12, which
pins numpy below 2.3, a downgrade of the project's numpy). Its validators import none of that, so they run from a
side directory:

    pip install --no-deps --target /tmp/ls-sdk label-studio-sdk==2.1.2
    pip install --target /tmp/ls-deps lxml xmljson jsf ujson appdirs pyjwt requests-mock
    curl -o config.xml  .../review/exchange/<id>/label-studio-config.xml   (or save both from the pool page)
    curl -o tasks.json  .../review/exchange/<id>/label-studio-tasks.json
    PYTHONPATH=/tmp/ls-sdk:/tmp/ls-deps python tests/reviewapp/review/exchange/labelstudio_sdk_check.py \\
        config.xml tasks.json

It runs ``LabelInterface.validate`` on the config (the SDK's label-config JSON schema, unique names, every toName
an object), checks every task against ``ImportApiRequest`` and each object's ``$variable``, and every annotation
against ``AnnotationRequest`` and the config (``_validate_object``: each result's control, object and choice). It
also shows that a choice off the scale is caught, so a pass is not vacuous.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(config_path: str, tasks_path: str) -> int:
    from label_studio_sdk.label_interface import LabelInterface
    from label_studio_sdk.types.annotation_request import AnnotationRequest
    from label_studio_sdk.types.import_api_request import ImportApiRequest

    interface = LabelInterface(Path(config_path).read_text())
    interface.validate()
    tasks = json.loads(Path(tasks_path).read_text())
    annotations = 0
    for i, task in enumerate(tasks):
        ImportApiRequest.model_validate(task)
        # validate_task's own first rule (its call to validate_annotation lacks the argument in 2.1.2).
        missing = [o.value_name for o in interface.objects if o.value_is_variable and task["data"].get(o.value_name)
                   is None]
        if missing:
            print(f"tasks[{i}].data: no {', '.join(missing)}")
            return 1
        for j, annotation in enumerate(task.get("annotations", [])):
            AnnotationRequest.model_validate(annotation)
            errors = interface._validate_object(annotation, return_errors=True)
            if errors:
                print(f"tasks[{i}].annotations[{j}]: {errors}")
                return 1
            annotations += 1
    control = next(iter(interface.controls))
    off_scale = {"result": [{"from_name": control.name, "to_name": control.to_name[0],
                             "type": "choices", "value": {"choices": ["7"]}}]}
    caught = interface._validate_object(off_scale, return_errors=True)
    print(f"{len(tasks)} tasks, {annotations} annotations valid; a choice off the scale is refused: {bool(caught)}")
    return 0 if caught else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
