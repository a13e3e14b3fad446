"""provisioner/observability"""
