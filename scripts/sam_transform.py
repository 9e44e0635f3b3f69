"""Expands a SAM template into the CloudFormation that AWS would deploy, offline.

cfn-lint checks the SAM resources as written; the transform (run by
CloudFormation at deploy time) can still fail or produce something broken —
an intrinsic SAM copies verbatim, an authorizer a route names but the API
does not define. Running it here lets scripts/test.sh lint its output too.

Usage: sam_transform.py TEMPLATE > transformed.json
"""

import json
import os
import sys

from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class NoManagedPolicies:
    """The template names no managed policy, so none are looked up."""

    def load(self):
        return {}


def main(path):
    with open(path, encoding="utf-8") as f:
        template = yaml_parse(f.read())
    # `sam deploy` uploads each CodeUri directory and puts its S3 location
    # in the template; stand in for that upload.
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = "s3://deployment-bucket/function.zip"
    # The region only fills pseudo parameters; nothing is called.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    try:
        transformed = transform(template, {}, NoManagedPolicies())
    except InvalidDocumentException as e:
        for cause in e.causes:
            print(f"{path}: SAM transform: {cause.message}", file=sys.stderr)
        sys.exit(1)
    json.dump(transformed, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
